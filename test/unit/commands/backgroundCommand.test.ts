import { backgroundCommand, BackgroundTask, backgroundTurnId, backgroundTurnOf } from '../../../src/commands/backgroundCommand';

/**
 * `/hermes background <prompt>`: the command's own part (the engine's, posting and starting the
 * turn, is proven in test/e2e/background.test.ts). A task id typed back in `/hermes stop <id>`
 * names a background turn only when it reads as one.
 */
function setup(started = true) {
    const tasks: BackgroundTask[] = [];
    const logs: string[] = [];
    const log = { info: (m: string) => void logs.push(m), warn: () => undefined, error: () => undefined, debug: () => undefined };
    const ports = {
        newId: () => '0badc0de',
        start: async (task: BackgroundTask) => (tasks.push(task), started),
        log: log as never,
        language: 'de',
    };
    return { tasks, logs, ports };
}

const ALICE = { id: 'U1', username: 'alice' };

describe('backgroundCommand', () => {
    it('starts the prompt as a task where the command was run; the reply is empty (the public message says it); the log names ids, never the prompt', async () => {
        const { tasks, logs, ports } = setup();
        expect(await backgroundCommand('  write the  report \n', ALICE, { roomId: 'R1', threadId: 'T1' }, ports)).toBe('');
        expect(tasks).toEqual([{ id: '0badc0de', turnId: 'bg.0badc0de', prompt: 'write the  report', who: ALICE, roomId: 'R1', threadId: 'T1' }]);
        expect(logs).toEqual(['Background task 0badc0de by U1 in room R1 started.']);
    });

    it('says so in the log when the task was refused (the caller was told why by the refusal)', async () => {
        const { logs, ports } = setup(false);
        expect(await backgroundCommand('x', ALICE, { roomId: 'R1' }, ports)).toBe('');
        expect(logs).toEqual(['Background task 0badc0de by U1 in room R1 not started.']);
    });

    it('without a prompt: the usage in the caller’s language, nothing started', async () => {
        const { tasks, ports } = setup();
        expect(await backgroundCommand('   ', ALICE, { roomId: 'R1' }, ports)).toMatch(/^Verwendung: `\/hermes background <prompt>`/);
        expect(tasks).toEqual([]);
    });
});

describe('backgroundTurnOf', () => {
    it.each<[string, string | undefined]>([
        ['0badc0de', 'bg.0badc0de'],
        [' 0BADC0DE ', 'bg.0badc0de'],
        ['0badc0d', undefined],
        ['0badc0dee', undefined],
        ['0badc0dg', undefined],
        ['bg.0badc0de', undefined],
        ['../0badc0de', undefined],
        ['', undefined],
    ])('%j → %j', (arg, turn) => {
        expect(backgroundTurnOf(arg)).toBe(turn);
    });

    it('is the turn id a task is started under', () => {
        expect(backgroundTurnId('0badc0de')).toBe('bg.0badc0de');
    });
});
