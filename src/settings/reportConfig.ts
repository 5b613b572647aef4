import { LogPort } from '../security/safeLog';
import { ConfigUpdate } from './configHolder';

/** Writes the outcome of a settings change to the admin-visible app log, naming settings, never values. */
export function reportConfig(update: ConfigUpdate, log: LogPort): void {
    switch (update.kind) {
        case 'applied':
            log.info(
                `Settings applied: Hermes at ${update.config.hermesUrl}, timeout ${update.config.hermesTimeoutSeconds} s, ` +
                    `${update.config.allowedUserIds.length === 0 ? 'every member of a room the bot is in may ask' : `${update.config.allowedUserIds.length} allowed user id(s)`}.`,
            );
            return;
        case 'kept-last-good':
            log.error(`Settings not applied, the previous valid settings stay in force: ${update.problems.join('; ')}.`);
            return;
        case 'unusable':
            log.error(`Settings invalid, the bot answers only with a "not configured" notice until they are fixed: ${update.problems.join('; ')}.`);
            return;
    }
}
