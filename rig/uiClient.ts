import { randomId } from './store';

/**
 * A user's Rocket.Chat web client, as far as UIKit surfaces go: the client generates the
 * triggerId of every interaction it posts, and acts on a server interaction (pushed on
 * `notify-user/<uid>/uiInteraction` by the bridge, or returned as the interaction's HTTP
 * response) only while that triggerId is pending. The server itself never checks it
 * (apps/meteor/app/apps/server/bridges/uiInteraction.ts only broadcasts). Transcribed from
 * apps/meteor/app/ui-message/client/ActionManager.ts (generateTriggerId, emitInteraction,
 * runWithTimeout, handleServerInteraction, disposeView) and the client hook
 * useAppUiKitInteraction (notify-user/<uid>/uiInteraction → handleServerInteraction).
 */

/** ActionManager.TRIGGER_TIMEOUT: a triggerId lives 5 s, and an interaction's request times out after 5 s. */
export const TRIGGER_TIMEOUT_MS = 5000;

interface UiElement {
    type?: string;
    actionId?: string;
    value?: unknown;
    initialValue?: unknown;
    initialTime?: unknown;
    initialDate?: unknown;
    initialOption?: { value?: unknown };
    initialOptions?: Array<{ value?: unknown }>;
    [key: string]: unknown;
}

interface UiBlock {
    type: string;
    blockId?: string;
    appId?: string;
    element?: UiElement;
    elements?: UiElement[];
    accessory?: UiElement;
    [key: string]: unknown;
}

/** A surface as the client holds it: the `view` of a `modal.*` / `contextual_bar.*` interaction. */
export interface UiView {
    id: string;
    appId: string;
    /** 'modal' or 'contextualBar' (UIKitSurfaceType). */
    type: string;
    title?: unknown;
    blocks: UiBlock[];
    submit?: unknown;
    close?: unknown;
    clearOnClose?: boolean;
    notifyOnClose?: boolean;
    showIcon?: boolean;
    [key: string]: unknown;
}

type SurfaceKind = 'modal' | 'contextualBar' | 'banner' | 'errors';

/** One server interaction that reached a user's client. */
export interface UiSurfaceRecord {
    type: SurfaceKind;
    action: 'open' | 'update' | 'close' | 'errors';
    /** The wire type: 'modal.open', 'modal.update', 'contextual_bar.open', 'errors', … */
    interaction: string;
    /** The view as delivered (blocks with the ids the engine assigned); absent for 'errors'. */
    view?: UiView;
    viewId: string;
    /** For 'errors': `{ [blockId or actionId]: message }` as the app gave it. */
    errors?: unknown;
    triggerId: string;
    appId: string;
    /** 'notify': pushed by the UI interaction bridge (openSurfaceView & co); 'response': the app's IUIKitResponse. */
    via: 'notify' | 'response';
    /**
     * Whether the client acted on it: its triggerId was one this client generated, not yet
     * used by another server interaction, and less than 5 s old. An interaction that is not
     * shown is dropped without a trace on a real client.
     */
    shown: boolean;
    at: number;
}

export interface OpenSurface {
    type: 'modal' | 'contextualBar';
    view: UiView;
    /** The last `errors` interaction for this view, shown under its fields. */
    errors?: unknown;
}

const SURFACE: Record<string, { type: SurfaceKind; action: UiSurfaceRecord['action'] }> = {
    'modal.open': { type: 'modal', action: 'open' },
    'modal.update': { type: 'modal', action: 'update' },
    'modal.close': { type: 'modal', action: 'close' },
    'contextual_bar.open': { type: 'contextualBar', action: 'open' },
    'contextual_bar.update': { type: 'contextualBar', action: 'update' },
    'contextual_bar.close': { type: 'contextualBar', action: 'close' },
    'banner.open': { type: 'banner', action: 'open' },
    'banner.update': { type: 'banner', action: 'update' },
    'banner.close': { type: 'banner', action: 'close' },
    errors: { type: 'errors', action: 'errors' },
};

/** True for a body the client would treat as a server interaction (it has one of the known types). */
export function isServerInteraction(body: unknown): body is { type: string; triggerId?: string; appId?: string } {
    return typeof body === 'object' && body !== null && typeof (body as { type?: unknown }).type === 'string' && (body as { type: string }).type in SURFACE;
}

export class UiClient {
    public readonly records: UiSurfaceRecord[] = [];
    private readonly triggers = new Map<string, { appId: string; until: number }>();
    private modal?: OpenSurface;
    private bar?: OpenSurface;

    /** `strict()` false: every interaction is shown (the kind rig). `onChange` runs after each interaction received or view closed. */
    constructor(
        private readonly strict: () => boolean,
        private readonly onChange: () => void = () => undefined,
    ) {}

    /** generateTriggerId: a Random.id() remembered with its app for 5 s. */
    public generateTriggerId(appId: string): string {
        const triggerId = randomId();
        this.triggers.set(triggerId, { appId, until: Date.now() + TRIGGER_TIMEOUT_MS });
        return triggerId;
    }

    /** The surfaces open on this client now (at most one modal and one contextual bar). */
    public open(): OpenSurface[] {
        return [this.modal, this.bar].filter((s): s is OpenSurface => Boolean(s));
    }

    public openById(viewId: string): OpenSurface | undefined {
        return this.open().find((s) => s.view.id === viewId);
    }

    /**
     * handleServerInteraction: the triggerId is invalidated on first use whatever happens next;
     * unknown, used or expired ids are ignored. 'modal.close' does nothing on the client.
     */
    public receive(interaction: Record<string, unknown>, via: UiSurfaceRecord['via']): UiSurfaceRecord | undefined {
        const type = String(interaction.type);
        const kind = SURFACE[type];
        if (!kind) {
            return undefined;
        }
        const triggerId = String(interaction.triggerId ?? '');
        const pending = this.triggers.get(triggerId);
        this.triggers.delete(triggerId);
        const shown = !this.strict() || Boolean(pending && pending.until >= Date.now());
        const view = interaction.view as UiView | undefined;
        const viewId = String(view?.id ?? interaction.viewId ?? '');
        const record: UiSurfaceRecord = {
            type: kind.type,
            action: kind.action,
            interaction: type,
            ...(view ? { view } : {}),
            viewId,
            ...(type === 'errors' ? { errors: interaction.errors } : {}),
            triggerId,
            appId: String(interaction.appId ?? pending?.appId ?? ''),
            via,
            shown,
            at: Date.now(),
        };
        this.records.push(record);
        if (shown) {
            this.apply(type, viewId, view, interaction.errors);
        }
        this.onChange();
        return record;
    }

    /**
     * emitInteraction's `finally`: a submit closes its view unless the answer was 'errors' or
     * an update; a close closes it unless the answer was 'errors'. No answer (an error 500)
     * leaves it open. A request slower than 5 s disposes a submitted view (runWithTimeout).
     */
    public settle(kind: string, viewId: string | undefined, answer: unknown, timedOut: boolean): void {
        if (!viewId) {
            return;
        }
        const type = isServerInteraction(answer) ? answer.type : undefined;
        if (kind === 'viewSubmit' && (timedOut || (answer && !['errors', 'modal.update', 'contextual_bar.update'].includes(type ?? '')))) {
            this.dispose(viewId);
        }
        if (kind === 'viewClosed' && answer && type !== 'errors') {
            this.dispose(viewId);
        }
    }

    public dispose(viewId: string): void {
        if (this.modal?.view.id === viewId) {
            this.modal = undefined;
        }
        if (this.bar?.view.id === viewId) {
            this.bar = undefined;
        }
        this.onChange();
    }

    private apply(type: string, viewId: string, view: UiView | undefined, errors: unknown): void {
        switch (type) {
            case 'errors': {
                const open = this.openById(viewId);
                if (open) {
                    open.errors = errors;
                }
                break;
            }
            case 'modal.open':
                // imperativeModal.open: one modal at a time.
                this.modal = { type: 'modal', view: view as UiView };
                break;
            case 'contextual_bar.open':
                // The room's contextual bar route shows one app view (tab 'app', context = view id).
                this.bar = { type: 'contextualBar', view: view as UiView };
                break;
            case 'modal.update':
            case 'contextual_bar.update': {
                // events.emit(view.id): only a view that is open takes the update.
                const open = this.openById(viewId);
                if (open && view) {
                    open.view = view;
                    delete open.errors;
                }
                break;
            }
            case 'contextual_bar.close':
                this.dispose(viewId);
                break;
            default:
                break;
        }
    }
}

/**
 * The state the client sends with a submit or close (fuselage-ui-kit
 * extractInitialStateFromLayout + UiKitModal's groupStateByBlockId): every actionable
 * element of a block's `element` or `elements` starts at its initial value
 * (initialValue || initialTime || initialDate || initialOption.value || initialOptions' values),
 * what the user entered replaces it, and values are grouped `{ [blockId]: { [actionId]: value } }`.
 * Undefined values vanish in the JSON body, leaving `{ [blockId]: {} }`.
 */
export function viewState(view: UiView, entered: Record<string, Record<string, unknown>> = {}): Record<string, Record<string, unknown>> {
    const values: Record<string, { blockId?: string; value: unknown }> = {};
    for (const block of view.blocks ?? []) {
        const elements = [...(block.element ? [block.element] : []), ...(Array.isArray(block.elements) ? block.elements : [])];
        for (const element of elements) {
            if (typeof element?.actionId === 'string') {
                values[element.actionId] = { blockId: block.blockId, value: initialValue(element) };
            }
        }
    }
    for (const [blockId, byAction] of Object.entries(entered)) {
        for (const [actionId, value] of Object.entries(byAction)) {
            values[actionId] = { blockId, value };
        }
    }
    const state: Record<string, Record<string, unknown>> = {};
    for (const [actionId, { blockId, value }] of Object.entries(values)) {
        if (!blockId) {
            continue;
        }
        state[blockId] = state[blockId] ?? {};
        state[blockId][actionId] = value;
    }
    return state;
}

function initialValue(element: UiElement): unknown {
    return (
        element.initialValue ||
        element.initialTime ||
        element.initialDate ||
        element.initialOption?.value ||
        element.initialOptions?.map((o) => o.value) ||
        undefined
    );
}

/** The block holding an element with this actionId, and the element. */
export function findAction(blocks: UiBlock[] | undefined, actionId: string, value?: string): { block: UiBlock; element: UiElement } | undefined {
    for (const block of blocks ?? []) {
        const elements = [...(block.element ? [block.element] : []), ...(block.accessory ? [block.accessory] : []), ...(block.elements ?? [])];
        // A button is found by its action and, when asked, its value (several buttons share an action).
        const element =
            elements.find((e) => e?.actionId === actionId && (value === undefined || e.value === value)) ?? elements.find((e) => e?.actionId === actionId);
        if (element) {
            return { block, element };
        }
    }
    return undefined;
}

/** What crosses the wire as JSON (an HTTP body, a DDP message): Dates become strings, undefined keys vanish. */
export function overJson<T>(value: T): T {
    return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * Where the web client sends a click on an element: `element.appId ?? block.appId`, else the
 * core app `core` (fuselage-ui-kit `useUiKitState` / `ActionsBlock`), which no installed app
 * answers, so the server's routeHandler fails with a 500. The message creator and updater stamp
 * the app's id on every block (UIHelper.assignIds); the notifier (`notifyUser`) does not.
 */
export function clickedAppId(found: { block: UiBlock; element: UiElement } | undefined): string {
    return String(found?.element.appId ?? found?.block.appId ?? 'core');
}
