import { IModify, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { BlockBuilder, ButtonStyle } from '@rocket.chat/apps-engine/definition/uikit';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { ButtonsView, LiveChatPort, PostOptions, ReplyTarget } from './chatPort';
import { BotMessageKind, KIND_FIELD, kindOf, TURN_FIELD } from './messageKind';

/** ChatPort on the engine's accessors: posts, edits and removes as the app's bot user. */
export class EngineChat implements LiveChatPort {
    constructor(private readonly read: IRead, private readonly modify: IModify, private readonly bot: IUser, private readonly knownRoom?: IRoom) {}

    public async post(target: ReplyTarget, text: string, kind: BotMessageKind, opts: PostOptions = {}): Promise<string> {
        const room = await this.room(target.roomId);
        const builder = this.modify.getCreator().startMessage().setSender(this.bot).setRoom(room).setText(text).setGroupable(false).addCustomField(KIND_FIELD, kind);
        if (opts.turnId) {
            builder.addCustomField(TURN_FIELD, opts.turnId);
        }
        if (target.threadId) {
            builder.setThreadId(target.threadId);
        }
        if (opts.buttons) {
            builder.setBlocks(this.blocks(opts.buttons));
        }
        return this.modify.getCreator().finish(builder);
    }

    public async edit(messageId: string, text: string, buttons?: ButtonsView | null): Promise<void> {
        const builder = await this.modify.getUpdater().message(messageId, this.bot);
        builder.setEditor(this.bot).setText(text);
        if (buttons) {
            builder.setBlocks(this.blocks(buttons));
        } else if (buttons === null) {
            builder.setBlocks([]);
        }
        await this.modify.getUpdater().finish(builder);
    }

    public async remove(messageId: string, roomId?: string): Promise<void> {
        // The server finds the message by id; a full read of it first would only cost a call.
        const message = { id: messageId, room: await this.room(roomId ?? this.knownRoom?.id ?? ''), sender: this.bot } as IMessage;
        await this.modify.getDeleter().deleteMessage(message, this.bot);
    }

    public async typing(roomId: string): Promise<() => Promise<void>> {
        // The notifier shows the display name unless given the username.
        return this.modify.getNotifier().typing({ id: roomId, username: this.bot.username });
    }

    public async postedFor(target: ReplyTarget, turnId: string): Promise<Array<{ id: string; kind?: BotMessageKind }>> {
        type Found = { id?: string; sender?: { _id?: string; id?: string }; customFields?: Record<string, unknown> };
        const mine = (m: Found) => (m.sender?._id ?? m.sender?.id) === this.bot.id && m.customFields?.[TURN_FIELD] === turnId;
        const found: Found[] = target.threadId
            ? ((await this.read.getThreadReader().getThreadById(target.threadId)) ?? [])
            : await this.read.getRoomReader().getMessages(target.roomId, { limit: 50, sort: { createdAt: 'desc' }, showThreadMessages: false });
        const byId = new Map<string, BotMessageKind | undefined>();
        for (const m of found.filter(mine)) {
            byId.set(m.id as string, kindOf(m.customFields));
        }
        return [...byId].map(([id, kind]) => ({ id, kind }));
    }

    public async whisper(userId: string, target: ReplyTarget, text: string): Promise<void> {
        const user = await this.read.getUserReader().getById(userId);
        const builder = this.modify.getCreator().startMessage().setSender(this.bot).setRoom(await this.room(target.roomId)).setText(text).setGroupable(false);
        if (target.threadId) {
            builder.setThreadId(target.threadId);
        }
        await this.modify.getNotifier().notifyUser(user, builder.getMessage());
    }

    /**
     * The room a message goes to. The server resolves a message's room by id alone, so
     * outside an event (in a scheduler job) the id is all the app sends: no read per post.
     */
    private async room(roomId: string): Promise<IRoom> {
        return this.knownRoom?.id === roomId ? this.knownRoom : ({ id: roomId } as IRoom);
    }

    private blocks(view: ButtonsView): BlockBuilder {
        const blocks = this.modify.getCreator().getBlockBuilder();
        blocks.addSectionBlock({ text: blocks.newMarkdownTextObject(view.text) });
        blocks.addActionsBlock({
            elements: view.buttons.map((b) =>
                blocks.newButtonElement({
                    actionId: b.actionId,
                    text: blocks.newPlainTextObject(b.label),
                    value: b.value,
                    style: b.style === 'primary' ? ButtonStyle.PRIMARY : b.style === 'danger' ? ButtonStyle.DANGER : undefined,
                }),
            ),
        });
        return blocks;
    }
}
