import { PersonalText } from '../i18n/messages';
import { RoomPolicy } from '../policy/policyLines';
import { policyForRoom, RoomLookup } from '../policy/roomPolicy';
import { HermesConfig } from '../settings/config';
import { BudgetHit, overBudget, usageDay, UsagePort } from '../usage/usage';
import { ConversationKind, conversationKind, isIgnoredSender } from './admit';

/**
 * The one admission of a turn, whatever starts it: a mention, a message action, a scheduled
 * prompt. Each surface used to apply its own subset (actions ignored `off` rooms, the room's
 * profile and instruction, and budgets), so the rules live here once. What needs no read is
 * decided by `roomRules` (pure); the daily budgets by `budgetHit` (one usage read, only when a
 * budget is set), so a caller can start that read beside its own.
 */

/** Who starts the turn: automation rooms refuse people's turns, never their own scheduled deliveries. */
type TurnSource = 'message' | 'action' | 'cron';

export interface TurnAsk {
    source: TurnSource;
    asker: { id: string; username?: string };
    /** `type`: Rocket.Chat's ('c', 'p', 'd', …); `directMemberCount` tells a 1:1 DM from a group DM. */
    room: { id: string; type: string; directMemberCount?: number };
    /** The room's policy as the caller looked it up already (a message's event does, once); absent: looked up here. */
    policy?: RoomLookup;
}

export type AdmissionConfig = Pick<
    HermesConfig,
    | 'allowedUserIds'
    | 'ignoreSenders'
    | 'adminUserIds'
    | 'automationRoomIds'
    | 'roomPolicies'
    | 'budgetUserTurns'
    | 'budgetUserTokens'
    | 'budgetRoomTurns'
    | 'budgetRoomTokens'
    | 'timezone'
>;

/** What the room's policy gives an admitted turn, to be carried on its record as a mention's turn carries it. */
export interface Admitted {
    admit: true;
    kind: ConversationKind;
    policy: RoomLookup;
    /** The Hermes profile and/or model alias the turn goes to (TurnRecord.route); absent: the default. */
    route?: { profile?: string; model?: string };
    /** The room's instruction for the system text. */
    instruction?: string;
    /** The profile its session keys are namespaced by (`agent:<profile>:…`). */
    profile?: string;
}

export type Refusal =
    | { admit: false; reason: 'ignored-sender' | 'not-allowed' | 'not-a-room-type' | 'room-policy' | 'room-off' | 'automation' }
    | { admit: false; reason: 'budget'; hit: BudgetHit };

export type TurnAdmission = Admitted | Refusal;

/** The rules that need no read: sender, allowlist, room type, the room's policy (`off`, malformed, its route), automation rooms. */
export function roomRules(ask: TurnAsk, config: AdmissionConfig): Admitted | Refusal {
    if (isIgnoredSender({ senderId: ask.asker.id, senderUsername: ask.asker.username ?? '' }, config.ignoreSenders)) {
        return { admit: false, reason: 'ignored-sender' };
    }
    if (config.allowedUserIds.length > 0 && !config.allowedUserIds.includes(ask.asker.id)) {
        return { admit: false, reason: 'not-allowed' };
    }
    const kind = conversationKind({ roomType: ask.room.type, directMemberCount: ask.room.directMemberCount });
    if (!kind) {
        return { admit: false, reason: 'not-a-room-type' };
    }
    // A 1:1 DM is not a room for room_policies: it always gets the default.
    const policy = ask.policy ?? policyForRoom(config, ask.room.id, kind === 'dm');
    if (policy.kind === 'broken') {
        // Never the default instead: a room the operator meant to restrict must not quietly get more.
        return { admit: false, reason: 'room-policy' };
    }
    if (policy.policy.mode === 'off') {
        return { admit: false, reason: 'room-off' };
    }
    if (kind === 'room' && ask.source !== 'cron' && config.automationRoomIds.includes(ask.room.id)) {
        return { admit: false, reason: 'automation' };
    }
    const own: Partial<RoomPolicy> = policy.kind === 'entry' ? policy.policy : {};
    const { profile, model, prompt } = own;
    return {
        admit: true,
        kind,
        policy,
        route: profile || model ? { profile, model } : undefined,
        instruction: prompt,
        profile,
    };
}

/**
 * The first daily budget the asker or the room has used up: one usage read when any budget is
 * set, none otherwise. Admins are exempt.
 */
export async function budgetHit(
    ask: Pick<TurnAsk, 'asker' | 'room'>,
    config: AdmissionConfig,
    usage: UsagePort | undefined,
    now: number,
): Promise<BudgetHit | undefined> {
    const c = config;
    const budgets = { userTurns: c.budgetUserTurns, userTokens: c.budgetUserTokens, roomTurns: c.budgetRoomTurns, roomTokens: c.budgetRoomTokens };
    const need = { user: budgets.userTurns > 0 || budgets.userTokens > 0, room: budgets.roomTurns > 0 || budgets.roomTokens > 0 };
    if (!usage || (!need.user && !need.room) || c.adminUserIds.includes(ask.asker.id)) {
        return undefined;
    }
    const today = await usage.today(usageDay(now, c.timezone), ask.asker.id, ask.room.id, need);
    return overBudget(budgets, today.user, today.room);
}

/** Both, in order: the budget is read only for a turn the rules let through. */
export async function admitTurn(ask: TurnAsk, config: AdmissionConfig, ports: { usage: UsagePort | undefined; now: () => number }): Promise<TurnAdmission> {
    const rules = roomRules(ask, config);
    if (!rules.admit) {
        return rules;
    }
    const hit = await budgetHit(ask, config, ports.usage, ports.now());
    return hit ? { admit: false, reason: 'budget', hit } : rules;
}

/**
 * What the asker is told, privately and in their language, when a turn they asked for
 * explicitly (a click, a command) is refused. A mention in an `off` room stays silent to
 * non-admins (MessageHandler); a click on a button everyone sees is answered.
 */
export function refusalNotice(refusal: Refusal, config: Pick<AdmissionConfig, 'timezone'>): PersonalText {
    switch (refusal.reason) {
        case 'budget':
            return (tr) => tr(`notice_budget_${refusal.hit.budget}`, { limit: refusal.hit.limit, tz: config.timezone });
        case 'room-policy':
            return (tr) => tr('notice_room-policy');
        case 'room-off':
            return (tr) => tr('action_room_off');
        case 'automation':
            return (tr) => tr('notice_automation');
        default:
            return (tr) => tr('action_not_available');
    }
}

/** Ids and the reason only: what the log may say about a refusal. */
export function describeRefusal(refusal: Refusal): string {
    return refusal.reason === 'budget' ? `daily budget ${refusal.hit.budget} (${refusal.hit.limit}) reached` : refusal.reason;
}
