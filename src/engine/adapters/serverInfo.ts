import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { ServerInfo } from '../../delivery/chatPort';
import { useServerLanguage } from '../../i18n/messages';

const TTL_MS = 5 * 60_000;
const DEFAULT_MAX = 5000;

/**
 * Message_MaxAllowedSize, Site_Url and Language change rarely and are needed on every answer; read
 * them at most every five minutes instead of adding reads to every turn. A refused message
 * forces a fresh read (`fresh`), so a lowered limit is picked up at once.
 */
export class ServerInfoCache {
    private cached: { value: ServerInfo; at: number } | undefined;

    public async get(read: IRead, fresh = false, now = Date.now()): Promise<ServerInfo> {
        if (!fresh && this.cached && now - this.cached.at < TTL_MS) {
            return this.cached.value;
        }
        const settings = read.getEnvironmentReader().getServerSettings();
        const [max, site, language] = await Promise.all([
            settings.getValueById('Message_MaxAllowedSize').catch(() => undefined),
            settings.getValueById('Site_Url').catch(() => undefined),
            settings.getValueById('Language').catch(() => undefined),
        ]);
        // What the bot writes follows the server's language (where the app has a translation).
        useServerLanguage(language);
        const maxMessageSize = Number(max) >= 100 ? Number(max) : DEFAULT_MAX;
        const value = { maxMessageSize, siteUrl: typeof site === 'string' ? site : '' };
        this.cached = { value, at: now };
        return value;
    }
}
