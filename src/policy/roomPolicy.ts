import { t as serverT, Translate } from '../i18n/messages';
import { DEFAULT_ROOM_POLICY, parseRoomPolicies, RoomPolicies, RoomPolicy } from './policyLines';

/** What a room gets under the `room_policies` setting (its format: policyLines.ts). */
export type RoomLookup = { kind: 'default'; policy: Readonly<RoomPolicy> } | { kind: 'entry'; policy: Readonly<RoomPolicy> } | { kind: 'broken' };

/** What a room gets: its own entry, refusal when its entry is unreadable, or the default. */
export function policyFor(policies: RoomPolicies, roomId: string): RoomLookup {
    if (policies.broken.has(roomId)) {
        return { kind: 'broken' };
    }
    const entry = policies.entries.get(roomId);
    return entry ? { kind: 'entry', policy: entry } : { kind: 'default', policy: DEFAULT_ROOM_POLICY };
}

/** The policy part of `/hermes status`; the instruction itself is not shown, only that there is one. */
export function describePolicy(lookup: RoomLookup, t: Translate = serverT): string {
    if (lookup.kind === 'broken') {
        return t('status_policy_broken');
    }
    const p = lookup.policy;
    if (lookup.kind === 'default') {
        return t('status_policy_default', { mode: p.mode });
    }
    const parts = [
        p.profile && t('status_policy_profile', { name: p.profile }),
        p.model && t('status_policy_model', { name: p.model }),
        t('status_policy_mode', { mode: p.mode }),
        p.reply && t('status_policy_reply', { reply: p.reply }),
        p.prompt && t('status_policy_instruction'),
    ];
    return parts.filter(Boolean).join(', ');
}

let parsed: { text: string; policies: RoomPolicies } | undefined;

/**
 * What a room gets under the current settings. The setting is parsed once per change (the
 * last text and its result are kept), so a message costs a map lookup. A 1:1 DM with the bot
 * is not a room here: it always gets the default.
 */
export function policyForRoom(config: { roomPolicies: string }, roomId: string, isDm = false): RoomLookup {
    if (isDm) {
        return { kind: 'default', policy: DEFAULT_ROOM_POLICY };
    }
    return policyFor(roomPolicies(config), roomId);
}

export function roomPolicies(config: { roomPolicies: string }): RoomPolicies {
    if (parsed?.text !== config.roomPolicies) {
        parsed = { text: config.roomPolicies, policies: parseRoomPolicies(config.roomPolicies) };
    }
    return parsed.policies;
}
