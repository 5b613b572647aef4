import { IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage, IMessageReactionContext } from '@rocket.chat/apps-engine/definition/messages';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { EngineFeedback } from '../../../src/engine/adapters/engineFeedback';
import { EngineUsage } from '../../../src/engine/adapters/engineUsage';
import { AppState } from '../../../src/engine/appState';
import { Gate } from '../../../src/engine/entry/gate';
import { ReactionHandler } from '../../../src/engine/entry/ReactionHandler';
import { FetchTransport } from '../../../src/hermes/fetchTransport';
import { memoryLog } from '../../support/fakeEngine';
import { MemoryPersistence } from '../../support/memoryPersistence';

/**
 * IPostMessageReacted (src/engine/entry/ReactionHandler.ts): one person's reactions on one answer
 * are taken one at a time, in the order their events came. The engine runs events side by side;
 * a 👎 taken back while the 👍 that replaces it is stored would otherwise remove the new vote.
 */
const user = (id: string) => ({ id, username: id, roles: ['user'] }) as unknown as IUser;

async function world() {
    const store = new MemoryPersistence();
    const settings: Record<string, unknown> = { hermes_url: 'http://127.0.0.1:9', hermes_api_key: 'k'.repeat(24) };
    const read = {
        getEnvironmentReader: () => ({ getSettings: () => ({ getValueById: async (id: string) => settings[id] }) }),
        getPersistenceReader: () => store.read,
        getUserReader: () => ({ getAppUser: async () => user('bot'), getById: async (id: string) => user(id) }),
    } as unknown as IRead;
    await new EngineUsage(store.read, store.write).record('2027-01-15', 'alice', 'R1', undefined, { receipt: 'Q1', answered: true, answers: ['A1'] });
    const handler = new ReactionHandler(new Gate(new AppState(new FetchTransport())));
    const answer = { id: 'A1', sender: user('bot'), room: { id: 'R1' } } as unknown as IMessage;
    const react = (reaction: string, isReacted: boolean) =>
        handler.handle(
            { reaction, isReacted, message: answer, user: user('bob') } as IMessageReactionContext,
            read,
            store.write as IPersistence,
            {} as IModify,
            memoryLog().logger as never,
        );
    return { store, react, votes: () => new EngineFeedback(store.read, store.write).current('A1', 'bob') };
}

describe('one person’s reactions on one answer', () => {
    it('two events at once, 👎 taken back and 👍 given: the 👍 stands, though the first one’s removal is slow', async () => {
        const w = await world();
        await w.react(':thumbsdown:', true);
        expect((await w.votes())?.vote).toBe('down');
        // The first removal of a vote waits for the next vote record to be written, or 100 ms: taken side
        // by side, the withdrawal's removal would land after the 👍 and remove it.
        const remove = w.store.write.removeByAssociation.bind(w.store.write);
        const create = w.store.write.createWithAssociations.bind(w.store.write);
        let created: () => void = () => undefined;
        const written = new Promise<void>((resolve) => (created = resolve));
        let slowed = false;
        w.store.write.removeByAssociation = async (association) => {
            if (!slowed && association.getID().startsWith('hermes-vote:')) {
                slowed = true;
                await Promise.race([written, new Promise((r) => setTimeout(r, 100))]);
            }
            return remove(association);
        };
        w.store.write.createWithAssociations = async (data, associations) => {
            const id = await create(data, associations);
            created();
            return id;
        };
        await Promise.all([w.react(':thumbsdown:', false), w.react(':thumbsup:', true)]);
        expect((await w.votes())?.vote).toBe('up');
    });
});
