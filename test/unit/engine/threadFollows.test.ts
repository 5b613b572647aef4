import { forgetDayMemo } from '../../../src/engine/adapters/dayIndex';
import { expireFollows, FOLLOW_KEEP_DAYS, ThreadFollows } from '../../../src/engine/adapters/threadFollows';
import { followedFor } from '../../../src/follow/threadFollow';
import { MemoryPersistence } from '../../support/memoryPersistence';

const DAY = 86_400_000;
const T0 = Date.parse('2026-12-01T12:00:00Z');

let store: MemoryPersistence;
let now = T0;
const follows = () => new ThreadFollows(store.read, store.write, () => now);

beforeEach(() => {
    store = new MemoryPersistence();
    forgetDayMemo();
    now = T0;
});

describe('followed threads in persistence', () => {
    it('an answer adds its asker once; unfollow removes the thread and says whether it was followed', async () => {
        await follows().add('TH', 'U1');
        await follows().add('TH', 'U1');
        await follows().add('TH', 'U2');
        expect(await follows().askers('TH')).toEqual(['U1', 'U2']);
        expect(await follows().askers('OTHER')).toBeUndefined();
        expect(await follows().remove('TH')).toBe(true);
        expect(await follows().askers('TH')).toBeUndefined();
        expect(await follows().remove('TH')).toBe(false);
    });

    it('a record moved to a later day leaves no copy behind; expiry drops threads idle longer than the keep window, not others', async () => {
        await follows().add('OLD', 'U1');
        await follows().add('MOVED', 'U1');
        now = T0 + 10 * DAY;
        await follows().add('MOVED', 'U2');
        expect(store.withAssociation('hermes-follow:')).toHaveLength(2);
        now = T0 + (FOLLOW_KEEP_DAYS + 1) * DAY;
        // Past the window a record is no longer honoured, even before the sweep removes it.
        expect(await follows().askers('OLD')).toBeUndefined();
        expect(await expireFollows(store.read, store.write, now)).toBe(1);
        expect(await follows().askers('MOVED')).toEqual(['U1', 'U2']);
        expect(store.withAssociation('hermes-follow:')).toHaveLength(1);
    });
});

describe('followedFor', () => {
    it('off never; asker only the askers; everyone anyone — and never a thread not followed', () => {
        expect(followedFor('off', ['U1'], 'U1')).toBe(false);
        expect(followedFor('asker', ['U1'], 'U1')).toBe(true);
        expect(followedFor('asker', ['U1'], 'U2')).toBe(false);
        expect(followedFor('everyone', ['U1'], 'U2')).toBe(true);
        expect(followedFor('everyone', undefined, 'U2')).toBe(false);
    });
});
