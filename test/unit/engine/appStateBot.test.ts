import { IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { AppState } from '../../../src/engine/appState';
import { FetchTransport } from '../../../src/hermes/fetchTransport';

/**
 * The bot user is read once, and calls that ask while the read is in flight resume in the order
 * they asked (engine/appState.ts botUser): message events' checks ask first thing after a restart,
 * and an answer out of order let a later question of a thread reach Hermes first (longTurns,
 * "20 turns in one thread", on engine 1.58 under load: q1 before q0).
 */

const BOT = { id: 'BOT', username: 'hermes.bot' } as IUser;

/** A user reader whose reads answer when the test says, the later ones first. */
function reader() {
    const pending: Array<{ resolve: (u: IUser | undefined) => void; reject: (e: Error) => void }> = [];
    const read = {
        getUserReader: () => ({
            getAppUser: () => new Promise<IUser | undefined>((resolve, reject) => pending.push({ resolve, reject })),
        }),
    } as unknown as IRead;
    return { read, pending };
}

describe('the bot user', () => {
    it('asked by two calls at once: one read, and they resume in the order they asked', async () => {
        const state = new AppState(new FetchTransport());
        const { read, pending } = reader();
        const order: string[] = [];
        const first = state.botUser(read).then((u) => order.push(`first ${u?.id}`));
        const second = state.botUser(read).then((u) => order.push(`second ${u?.id}`));
        expect(pending).toHaveLength(1);
        // Were there two reads, the later answering first would resume the second caller first.
        [...pending].reverse().forEach((p) => p.resolve(BOT));
        await Promise.all([first, second]);
        expect(order).toEqual(['first BOT', 'second BOT']);
    });

    it('once read, is not read again', async () => {
        const state = new AppState(new FetchTransport());
        const { read, pending } = reader();
        const asked = state.botUser(read);
        pending[0].resolve(BOT);
        expect(await asked).toBe(BOT);
        expect(await state.botUser(read)).toBe(BOT);
        expect(pending).toHaveLength(1);
    });

    it('after a failed read (or none found), the next call reads again', async () => {
        const state = new AppState(new FetchTransport());
        const { read, pending } = reader();
        const failed = state.botUser(read);
        pending[0].reject(new Error('bridge down'));
        await expect(failed).rejects.toThrow('bridge down');
        const none = state.botUser(read);
        pending[1].resolve(undefined);
        expect(await none).toBeUndefined();
        const found = state.botUser(read);
        expect(pending).toHaveLength(3);
        pending[2].resolve(BOT);
        expect(await found).toBe(BOT);
    });
});
