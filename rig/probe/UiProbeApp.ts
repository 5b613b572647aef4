import { IAppAccessors, IConfigurationExtend, IHttp, ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { App } from '@rocket.chat/apps-engine/definition/App';
import { IMessage, IPostMessageSent } from '@rocket.chat/apps-engine/definition/messages';
import { IAppInfo, RocketChatAssociationModel, RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { RoomTypeFilter, UIActionButtonContext } from '@rocket.chat/apps-engine/definition/ui';
import {
    IUIKitResponse,
    IUIKitSurface,
    UIKitActionButtonInteractionContext,
    UIKitBlockInteractionContext,
    UIKitSurfaceType,
    UIKitViewCloseInteractionContext,
    UIKitViewSubmitInteractionContext,
} from '@rocket.chat/apps-engine/definition/uikit';

/**
 * A tiny app the rig's own tests install (test/unit/rig/rigUi.test.ts), so the UIKit and upload
 * paths run through the real engine and Deno runtime: it registers one button per context,
 * opens and updates surfaces, and answers every interaction with what it received
 * (`{ success, received }`), which the server returns to the client as it is. Its ids are
 * `UiProbeApp.ids` (the class must be the bundle's first export: the runtime constructs it).
 */
const PROBE = {
    messageButton: 'probe-message',
    roomButton: 'probe-room',
    boxButton: 'probe-box',
    modalId: 'probe-modal',
    barId: 'probe-bar',
    barButton: 'bar-refresh',
    /** Persistence association under which the app records what it read of an upload. */
    uploadRecord: 'probe-upload',
} as const;

type Echo = IUIKitResponse & { received: unknown };

export class UiProbeApp extends App implements IPostMessageSent {
    public static readonly ids = PROBE;

    constructor(info: IAppInfo, logger: ILogger, accessors: IAppAccessors) {
        super(info, logger, accessors);
    }

    public async executeActionButtonHandler(
        context: UIKitActionButtonInteractionContext,
        _read: IRead,
        _http: IHttp,
        _persistence: IPersistence,
        modify: IModify,
    ): Promise<Echo> {
        const data = context.getInteractionData();
        const ui = modify.getUiController();
        if (data.actionId === PROBE.messageButton) {
            // Open, then update with the same triggerId: the client only takes the first.
            await ui.openSurfaceView(modal('Note'), { triggerId: data.triggerId }, data.user);
            await ui.updateSurfaceView(modal('Note (updated)'), { triggerId: data.triggerId }, data.user);
        }
        if (data.actionId === PROBE.roomButton) {
            await ui.openSurfaceView(bar('first'), { triggerId: data.triggerId }, data.user);
        }
        if (data.actionId === PROBE.boxButton) {
            // Opened by the answer itself, not the bridge.
            return { ...context.getInteractionResponder().openModalViewResponse(modal('From the composer')), received: data };
        }
        return { success: true, received: data };
    }

    public async executeViewSubmitHandler(context: UIKitViewSubmitInteractionContext): Promise<Echo> {
        const data = context.getInteractionData();
        const state = data.view.state as Record<string, Record<string, unknown>> | undefined;
        if (!state?.['note-block']?.note) {
            return { ...context.getInteractionResponder().viewErrorResponse({ viewId: data.view.id, errors: { note: 'required' } }), received: data };
        }
        return { success: true, received: data };
    }

    public async executeViewClosedHandler(context: UIKitViewCloseInteractionContext): Promise<Echo> {
        return { success: true, received: context.getInteractionData() };
    }

    public async executeBlockActionHandler(
        context: UIKitBlockInteractionContext,
        _read: IRead,
        _http: IHttp,
        _persistence: IPersistence,
        modify: IModify,
    ): Promise<Echo> {
        const data = context.getInteractionData();
        if (data.actionId === PROBE.barButton) {
            await modify.getUiController().updateSurfaceView(bar(`refreshed ${String(data.value)}`), { triggerId: data.triggerId }, data.user);
        }
        return { success: true, received: data };
    }

    /** For a file message: every way to read the upload, recorded in persistence. */
    public async executePostMessageSent(message: IMessage, read: IRead, _http: IHttp, persistence: IPersistence): Promise<void> {
        if (!message.file || message.sender.id === (await read.getUserReader().getAppUser())?.id) {
            return;
        }
        const reader = read.getUploadReader();
        const attempt = async <T>(run: () => Promise<T>) => {
            try {
                return { value: await run() };
            } catch (error) {
                return { error: error instanceof Error ? error.message : String(error) };
            }
        };
        const base64 = (b: { value?: Buffer; error?: string }) => (b.value ? { value: Buffer.from(b.value).toString('base64') } : b);
        const upload = await attempt(() => reader.getById(message.file!._id));
        const record = {
            messageId: message.id,
            file: message.file,
            unmapped: (message as { _unmappedProperties_?: unknown })._unmappedProperties_ ?? null,
            attachments: message.attachments ?? null,
            text: message.text ?? null,
            groupable: message.groupable ?? null,
            threadId: message.threadId ?? null,
            upload,
            datesAreDates: upload.value ? [upload.value.updatedAt, upload.value.uploadedAt].map((d) => d instanceof Date) : null,
            bufferIsBuffer: upload.value ? Buffer.isBuffer(await reader.getBuffer(upload.value)) : null,
            bufferById: base64(await attempt(() => reader.getBufferById(message.file!._id))),
            buffer: upload.value ? base64(await attempt(() => reader.getBuffer(upload.value))) : null,
            missing: await attempt(() => reader.getById('no-such-upload')),
            missingBuffer: await attempt(() => reader.getBufferById('no-such-upload')),
            forgedStore: upload.value ? await attempt(() => reader.getBuffer({ ...upload.value, store: 'Nowhere' } as never)) : null,
        };
        await persistence.createWithAssociation(record, new RocketChatAssociationRecord(RocketChatAssociationModel.MISC, PROBE.uploadRecord));
    }

    protected async extendConfiguration(configuration: IConfigurationExtend): Promise<void> {
        await configuration.ui.registerButton({ actionId: PROBE.messageButton, labelI18n: 'probe_message', context: UIActionButtonContext.MESSAGE_ACTION });
        await configuration.ui.registerButton({
            actionId: PROBE.roomButton,
            labelI18n: 'probe_room',
            context: UIActionButtonContext.ROOM_ACTION,
            when: { roomTypes: [RoomTypeFilter.PUBLIC_CHANNEL, RoomTypeFilter.PRIVATE_CHANNEL] },
        });
        await configuration.ui.registerButton({ actionId: PROBE.boxButton, labelI18n: 'probe_box', context: UIActionButtonContext.MESSAGE_BOX_ACTION });
    }
}

function modal(title: string): IUIKitSurface {
    return {
        id: PROBE.modalId,
        type: UIKitSurfaceType.MODAL,
        title: { type: 'plain_text', text: title },
        blocks: [
            {
                type: 'input',
                blockId: 'note-block',
                label: { type: 'plain_text', text: 'Note' },
                element: { type: 'plain_text_input', actionId: 'note', initialValue: 'draft' },
            },
            { type: 'input', blockId: 'other-block', label: { type: 'plain_text', text: 'Other' }, element: { type: 'plain_text_input', actionId: 'other' } },
        ],
        submit: { type: 'button', text: { type: 'plain_text', text: 'Save' }, actionId: 'save' },
    } as unknown as IUIKitSurface;
}

function bar(text: string): IUIKitSurface {
    return {
        id: PROBE.barId,
        type: UIKitSurfaceType.CONTEXTUAL_BAR,
        title: { type: 'plain_text', text: 'Probe' },
        blocks: [
            { type: 'section', text: { type: 'plain_text', text } },
            {
                type: 'actions',
                blockId: 'bar-actions',
                elements: [{ type: 'button', actionId: PROBE.barButton, text: { type: 'plain_text', text: 'Refresh' }, value: 'r1' }],
            },
        ],
    } as unknown as IUIKitSurface;
}
