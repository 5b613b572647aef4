import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IApp } from '@rocket.chat/apps-engine/definition/IApp';
import { MemoryPersistence } from './memoryPersistence';

/** A log that keeps every line, to assert on what the app wrote. */
export function memoryLog() {
    const lines: string[] = [];
    const at =
        (level: string) =>
        (...args: unknown[]) => {
            lines.push(`${level} ${args.map(String).join(' ')}`);
        };
    return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), log: at('log'), success: at('success') } };
}

export interface FakeWorld {
    settings: Record<string, unknown>;
    botId: string;
    /** user id → room ids */
    memberships: Record<string, string[]>;
    messages?: Record<string, Array<{ id: string; text: string; username: string; createdAt: Date }>>;
}

/**
 * Just enough of the engine's IRead for an endpoint or ensureConfig to run in a unit test:
 * settings, persistence reads, the app user, memberships, one page of room messages.
 */
export function fakeRead(world: FakeWorld, store: MemoryPersistence): IRead {
    return {
        getEnvironmentReader: () => ({ getSettings: () => ({ getValueById: async (id: string) => world.settings[id] }) }),
        getPersistenceReader: () => store.read,
        getUserReader: () => ({
            getAppUser: async () => ({ id: world.botId, username: 'hermes.bot' }),
            getUserRoomIds: async (userId: string) => world.memberships[userId] ?? [],
        }),
        getRoomReader: () => ({
            getMessages: async (roomId: string) =>
                (world.messages?.[roomId] ?? []).map((m) => ({
                    id: m.id,
                    text: m.text,
                    createdAt: m.createdAt,
                    sender: { _id: 'someone', username: m.username },
                })),
        }),
    } as unknown as IRead;
}

/** An app object for ApiEndpoint's constructor: only the logger is used. */
export function fakeApp(logger: object): IApp {
    return { getLogger: () => logger } as unknown as IApp;
}
