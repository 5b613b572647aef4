import { t as serverT, Translate } from '../i18n/messages';
import { HermesClient } from '../hermes/client';
import { HermesError } from '../hermes/errors';
import { SessionRecord } from '../sessions/sessionRecord';

/** The status of one conversation: its session and whether Hermes answers. */
export async function statusText(record: SessionRecord, hermes: HermesClient | undefined, policy: string, t: Translate = serverT): Promise<string> {
    let health: string;
    if (!hermes) {
        health = t('command_status_not_configured');
    } else {
        try {
            const h = await hermes.health();
            health = t('command_status_health_ok', { version: h.version ?? 'unknown' });
        } catch (error) {
            health = t('command_status_health_down', { reason: error instanceof HermesError ? error.kind : 'error' });
        }
    }
    return t('command_status', { key: record.key, sessionId: record.sessionId, turns: record.turns, policy, health });
}

export function helpText(botUsername: string, t: Translate = serverT): string {
    return t('command_help', { bot: botUsername });
}
