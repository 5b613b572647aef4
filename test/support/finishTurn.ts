import { Outcome } from '../../src/turns/observe';
import { TickPorts } from '../../src/turns/tickPorts';
import { TurnRecord } from '../../src/turns/turnRecord';
import { memoryTickPorts, MemoryChat, queuedTurn, VirtualScheduler } from './turnPorts';

/**
 * The running turn the finish tests end (test/unit/finish*.test.ts, mutants-finish.test.ts), on the memory ports of
 * test/support/turnPorts.ts: sent 4 s ago, asked 5 s ago, in room R1 by alice (U1).
 */

let n = 0;
/** Ids unique across the process: the app keeps per-process state by turn id. */
export const uid = (prefix: string) => `${prefix}${++n}x${Math.random().toString(36).slice(2, 8)}`;

export const answer = (text: string, extra: Partial<Extract<Outcome, { kind: 'answer' }>> = {}): Outcome => ({ kind: 'answer', text, ...extra });

/** `count` paragraphs of `size` characters each, none with a space (the splitter cuts between them). */
export const paragraphs = (count: number, size: number) => Array.from({ length: count }, (_, i) => `${i}`.padEnd(size, 'x'));

export async function runningTurn(over: Partial<TurnRecord> = {}, portsOver: Partial<Parameters<typeof memoryTickPorts>[0]> = {}) {
    const sched = new VirtualScheduler();
    const env = memoryTickPorts({ sched, ...portsOver });
    const rec = queuedTurn(uid('F'), {
        phase: 'running',
        createdAt: sched.time - 5000,
        startedAt: sched.time - 4000,
        transport: 'runs',
        runId: 'run_1',
        ...over,
    });
    await env.store.save(rec);
    return { sched, ...env, rec };
}

/** A chat post the test lets fail (`failures` in order; undefined lets one through). */
export function failPosts(chat: MemoryChat, failures: Array<Error | undefined>): void {
    const post = chat.post.bind(chat);
    chat.post = async (...args: Parameters<MemoryChat['post']>) => {
        const failure = failures.shift();
        if (failure) {
            throw failure;
        }
        return post(...args);
    };
}

/** The records the store was handed with a finishing lease (the write that fixes the delivery). */
export function leaseWrites(ports: TickPorts): TurnRecord[] {
    const writes: TurnRecord[] = [];
    const save = ports.store.save.bind(ports.store);
    ports.store.save = async (record, opts) => {
        if (record.owner?.as === 'finishing') {
            writes.push(JSON.parse(JSON.stringify(record)) as TurnRecord);
        }
        return save(record, opts);
    };
    return writes;
}
