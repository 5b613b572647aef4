import { HermesClient } from '../../../src/hermes/client';
import { LiveTurns } from '../../../src/hermes/liveTurns';

/**
 * New answer text wakes a streamed turn (hermes/liveTurns.ts wakeOnText, holdText): not before
 * its first moment (the status delay), then at most once per interval, and a turn that could not
 * show its text yet is woken when it may.
 */
describe('text wake-ups of a streamed turn', () => {
    beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
    afterEach(() => jest.useRealTimers());

    /** A chat turn whose stream the test feeds: `say(text)` is the answer so far. */
    function chatTurn(live: LiveTurns, turnId: string): (text: string) => void {
        let onText: ((text: string) => void) | undefined;
        const hermes = {
            chatStream: (_turn: unknown, _progress: unknown, _signal: unknown, text: (t: string) => void) => {
                onText = text;
                return new Promise(() => undefined);
            },
        } as unknown as HermesClient;
        live.startChat(turnId, hermes, { sessionId: 's', sessionKey: 'k', system: '', user: '', idempotencyKey: turnId });
        return (text) => onText?.(text);
    }

    function woken(live: LiveTurns, turnId: string): number[] {
        const at: number[] = [];
        live.onWake(turnId, () => {
            at.push(Date.now() - 1_000_000);
            live.woke(turnId);
        });
        return at;
    }

    it('waits for the first moment, then wakes at most once per interval', () => {
        const live = new LiveTurns();
        const at = woken(live, 'T1');
        const say = chatTurn(live, 'T1');
        live.wakeOnText('T1', 1_500, 3_000);
        say('Hello ');
        jest.advanceTimersByTime(2_999);
        expect(at).toEqual([]);
        jest.advanceTimersByTime(1);
        expect(at).toEqual([3_000]);
        say('Hello there ');
        jest.advanceTimersByTime(1_000);
        say('Hello there you ');
        jest.advanceTimersByTime(499);
        expect(at).toEqual([3_000]);
        jest.advanceTimersByTime(1);
        expect(at).toEqual([3_000, 4_500]);
        // No new text: no wake-up.
        jest.advanceTimersByTime(10_000);
        expect(at).toEqual([3_000, 4_500]);
    });

    it('a turn that showed its text puts the next wake off; one that could not is woken when it may', () => {
        const live = new LiveTurns();
        const at = woken(live, 'T2');
        const say = chatTurn(live, 'T2');
        live.wakeOnText('T2', 1_000);
        live.holdText('T2', 2_000);
        say('Some words ');
        jest.advanceTimersByTime(1_999);
        expect(at).toEqual([]);
        jest.advanceTimersByTime(1);
        expect(at).toEqual([2_000]);
        live.holdText('T2', 700, true);
        jest.advanceTimersByTime(700);
        expect(at).toEqual([2_000, 2_700]);
    });

    it('ends with the turn: no wake-up after', () => {
        const live = new LiveTurns();
        const at = woken(live, 'T3');
        const say = chatTurn(live, 'T3');
        live.wakeOnText('T3', 1_000);
        say('Words ');
        live.end('T3');
        jest.advanceTimersByTime(5_000);
        expect(at).toEqual([]);
    });

    it('a turn that is not streamed is not woken by text', () => {
        const live = new LiveTurns();
        const at = woken(live, 'T4');
        const say = chatTurn(live, 'T4');
        live.holdText('T4', 0, true);
        say('Words ');
        jest.advanceTimersByTime(5_000);
        expect(at).toEqual([]);
        expect(live.get('T4')?.text).toBe('Words ');
    });
});
