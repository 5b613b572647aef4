import { roomPolicies } from '../policy/roomPolicy';
import { LogPort } from '../security/safeLog';
import { HermesConfig } from './config';
import { ConfigUpdate } from './configHolder';

/** What the log reports: a settings change, or a restarted process taking up the persisted last good configuration. */
export type ConfigReport = ConfigUpdate | { kind: 'stored-last-good' };

/** Writes the outcome of a settings change to the admin-visible app log, naming settings, never values. */
export function reportConfig(update: ConfigReport, log: LogPort): void {
    switch (update.kind) {
        case 'applied': {
            const c = update.config;
            log.info(
                `Settings applied: Hermes at ${c.hermesUrl}, timeout ${c.hermesTimeoutSeconds} s, ` +
                    `${c.allowedUserIds.length === 0 ? 'every member of a room the bot is in may ask' : `${c.allowedUserIds.length} allowed user id(s)`}.`,
            );
            if (c.sharedMemoryWarning && c.allowedUserIds.length !== 1) {
                log.warn(
                    'More than one person can reach this bot. Configure Hermes for a shared bot: memory.memory_enabled and memory.user_profile_enabled off ' +
                        "(or what one person says can surface in another's answer), approvals.mode manual, an explicit platform_toolsets list, a sandboxed terminal. " +
                        '(shared_memory_warning off silences this.)',
                );
            }
            reportRoomPolicies(c, log);
            if (c.allowContextReferences) {
                log.warn(
                    "allow_context_references is on: @file:, @folder:, @git:, @url:, @diff and @staged in the asker's own message reach Hermes live. Anyone who can reach the bot can make it read its workspace or fetch an address.",
                );
            }
            return;
        }
        case 'kept-last-good':
            log.error(`Settings not applied, the previous valid settings stay in force: ${update.problems.join('; ')}.`);
            return;
        case 'unusable':
            log.error(
                `Settings invalid: ${update.problems.join('; ')}. Until they are fixed the app uses the last valid settings it stored, if there are any ` +
                    '(the log says so on the first call), and otherwise answers only with a "not configured" notice.',
            );
            return;
        case 'stored-last-good':
            log.warn(
                'The settings are invalid, so the app uses the last valid settings it stored (before this app process started). Fix the settings to change them.',
            );
            return;
    }
}

/**
 * Each unreadable room_policies line, by number (never its text): the rest of the settings
 * apply, and the room it names refuses service until the line is fixed.
 */
function reportRoomPolicies(c: HermesConfig, log: LogPort): void {
    const policies = roomPolicies(c);
    for (const p of policies.problems) {
        log.error(`room_policies line ${p.line}: ${p.reason}${p.roomId ? `; room ${p.roomId} refuses service until the line is fixed` : ''}.`);
    }
    if (policies.entries.size > 0 || policies.broken.size > 0) {
        log.info(`room_policies: ${policies.entries.size} room(s) with their own policy, ${policies.broken.size} refusing service.`);
    }
}
