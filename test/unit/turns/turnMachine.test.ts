import { IllegalTransition, stateOf, transition, TurnEvent, TurnState } from '../../../src/turns/machine';
import { TurnRecord } from '../../../src/turns/turnRecord';
import { queuedTurn } from '../../support/turnPorts';

/**
 * The turn's state machine (src/turns/machine.ts), over every (state, event) pair: the legal
 * ones lead where the table below says and write only their own fields; every other pair
 * throws and leaves the record as it was. The expected table is written out here, not read
 * from the app's.
 */

const approval = {
    messageId: 'A1',
    request: { command: 'rm -rf /tmp/x', description: 'delete', choices: ['once', 'deny'], allowPermanent: false },
    number: 1,
    postedAt: 5,
};
const delivery = { kind: 'answer' as const, parts: ['the answer'], posted: [], startedAt: 7, summary: 'answered' };

/** A record standing in each state, built field by field as the turn path writes them. */
function standingIn(state: TurnState): TurnRecord {
    const rec = queuedTurn('M1');
    switch (state) {
        case 'queued':
            return rec;
        case 'waiting':
            return { ...rec, waiting: true };
        case 'running':
            return { ...rec, phase: 'running', runId: 'run_1', startedAt: 3 };
        case 'awaiting-approval':
            return { ...rec, phase: 'running', runId: 'run_1', startedAt: 3, approval: { ...approval } };
        case 'delivering':
            return { ...rec, phase: 'running', runId: 'run_1', delivery: { ...delivery } };
        case 'done':
            return { ...rec, phase: 'done', delivery: { ...delivery } };
    }
}

const events: Record<TurnEvent['kind'], TurnEvent> = {
    wait: { kind: 'wait', why: 'slot', own: false },
    go: { kind: 'go' },
    retry: { kind: 'retry', at: 9_000 },
    started: { kind: 'started', runId: 'run_2', holder: 'P1', now: 1_000, deadlineAt: 61_000 },
    approvalAsked: { kind: 'approvalAsked', approval: { ...approval, messageId: 'A2', number: 2 } },
    approvalClosed: { kind: 'approvalClosed' },
    outcomeFixed: { kind: 'outcomeFixed', delivery: { ...delivery, parts: ['new'] } },
    ended: { kind: 'ended' },
    abandoned: { kind: 'abandoned' },
    joined: { kind: 'joined' },
};

const STATES: TurnState[] = ['queued', 'waiting', 'running', 'awaiting-approval', 'delivering', 'done'];

/** Where each event leads from each state; absent: illegal. */
const EXPECTED: Record<TurnState, Partial<Record<TurnEvent['kind'], TurnState>>> = {
    queued: { wait: 'waiting', go: 'queued', retry: 'queued', started: 'running', outcomeFixed: 'delivering', abandoned: 'done', joined: 'done' },
    waiting: { wait: 'waiting', go: 'queued', retry: 'waiting', outcomeFixed: 'delivering', abandoned: 'done', joined: 'done' },
    running: { approvalAsked: 'awaiting-approval', outcomeFixed: 'delivering', abandoned: 'done' },
    'awaiting-approval': { approvalAsked: 'awaiting-approval', approvalClosed: 'running', outcomeFixed: 'delivering', abandoned: 'done' },
    delivering: { outcomeFixed: 'delivering', ended: 'done', abandoned: 'done' },
    done: {},
};

describe('every (state, event) pair', () => {
    const pairs = STATES.flatMap((s) => (Object.keys(events) as Array<TurnEvent['kind']>).map((e) => [s, e] as const));

    it('covers 6 states × 10 events', () => {
        expect(pairs).toHaveLength(60);
        for (const s of STATES) {
            expect(stateOf(standingIn(s))).toBe(s);
        }
    });

    it.each(pairs)('%s + %s', (state, kind) => {
        const rec = standingIn(state);
        const before = structuredClone(rec);
        const to = EXPECTED[state][kind];
        if (to === undefined) {
            expect(() => transition(rec, events[kind])).toThrow(IllegalTransition);
            expect(() => transition(rec, events[kind])).toThrow(`Turn M1 cannot take "${kind}" in state ${state}.`);
        } else {
            expect(stateOf(transition(rec, events[kind]))).toBe(to);
        }
        // Pure: the record in hand is never changed.
        expect(rec).toEqual(before);
    });
});

describe('what each move writes', () => {
    /** The fields that differ between two records. */
    function written(before: TurnRecord, after: TurnRecord): Record<string, unknown> {
        const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
        return Object.fromEntries(
            [...keys]
                .filter((k) => JSON.stringify(before[k as keyof TurnRecord]) !== JSON.stringify(after[k as keyof TurnRecord]))
                .map((k) => [k, after[k as keyof TurnRecord]]),
        );
    }

    it('wait: the reason; the fresh claim goes only when it was this process’s', () => {
        const claimed: TurnRecord = { ...standingIn('queued'), owner: { as: 'sending', process: 'P1', until: 50, at: 1 } };
        expect(written(claimed, transition(claimed, { kind: 'wait', why: true, own: false }))).toEqual({ waiting: true });
        expect(written(claimed, transition(claimed, { kind: 'wait', why: 'slot', own: true }))).toStrictEqual({ waiting: 'slot', owner: undefined });
    });

    it('go: the wait is over, a sending claim stays', () => {
        const rec: TurnRecord = { ...standingIn('waiting'), owner: { as: 'sending', process: 'P1', until: 50 } };
        const after = transition(rec, { kind: 'go' });
        expect(written(rec, after)).toEqual({ waiting: undefined });
        expect(after.owner).toEqual({ as: 'sending', process: 'P1', until: 50 });
    });

    it('retry: only when it is sent again', () => {
        const rec = standingIn('queued');
        expect(written(rec, transition(rec, { kind: 'retry', at: 4_000 }))).toEqual({ retryAt: 4_000 });
    });

    it('started: the run, its times and its stream’s holder; the retry and the sending claim are over', () => {
        const rec: TurnRecord = { ...standingIn('queued'), retryAt: 900, owner: { as: 'sending', process: 'P0', until: 2_000 } };
        expect(written(rec, transition(rec, events.started))).toEqual({
            phase: 'running',
            runId: 'run_2',
            startedAt: 1_000,
            deadlineAt: 61_000,
            retryAt: undefined,
            owner: { as: 'streaming', process: 'P1', until: 31_000, at: 1_000 },
            tickAt: 1_000,
        });
    });

    it('started on the chat transport: no run id', () => {
        const after = transition(standingIn('queued'), { kind: 'started', holder: 'P1', now: 1, deadlineAt: 2 });
        expect(after.runId).toBeUndefined();
        expect(stateOf(after)).toBe('running');
    });

    it('approvalAsked: the new prompt replaces the one before', () => {
        const rec = standingIn('awaiting-approval');
        expect(written(rec, transition(rec, events.approvalAsked))).toEqual({ approval: { ...approval, messageId: 'A2', number: 2 } });
    });

    it('approvalClosed: the same prompt, closed', () => {
        const rec = standingIn('awaiting-approval');
        expect(written(rec, transition(rec, { kind: 'approvalClosed' }))).toEqual({ approval: { ...approval, closed: true } });
    });

    it('outcomeFixed: the outcome only (a sending claim is the finisher’s to clear)', () => {
        const rec: TurnRecord = { ...standingIn('queued'), owner: { as: 'sending', process: 'P1', until: 50 } };
        expect(written(rec, transition(rec, events.outcomeFixed))).toEqual({ delivery: { ...delivery, parts: ['new'] } });
    });

    it('ended, abandoned and joined: done, nothing else', () => {
        expect(written(standingIn('delivering'), transition(standingIn('delivering'), { kind: 'ended' }))).toEqual({ phase: 'done' });
        expect(written(standingIn('running'), transition(standingIn('running'), { kind: 'abandoned' }))).toEqual({ phase: 'done' });
        expect(written(standingIn('waiting'), transition(standingIn('waiting'), { kind: 'joined' }))).toEqual({ phase: 'done' });
    });
});

describe('a state read from a record of a released version', () => {
    it('a closed approval is a running turn; an outcome outranks the phase', () => {
        expect(stateOf({ phase: 'running', approval: { ...approval, closed: true } })).toBe('running');
        expect(stateOf({ phase: 'queued', waiting: 'slot', delivery })).toBe('delivering');
        expect(stateOf({ phase: 'queued', waiting: false })).toBe('queued');
        expect(stateOf({ phase: 'done' })).toBe('done');
    });
});
