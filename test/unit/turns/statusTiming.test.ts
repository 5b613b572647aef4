import { nextLookIn } from '../../../src/turns/progress';
import { queuedTurn, TEST_CONFIG } from '../../support/turnPorts';

/** When a running turn's next tick comes: its usual interval, or sooner when its status message falls due (progress.ts). */
const NOW = 1_800_000_000_000;
const ports = (progress: 'off' | 'status' | 'tools' = 'tools') => ({ config: { ...TEST_CONFIG, progress, statusDelaySeconds: 3 }, now: () => NOW });
const running = (over = {}) => queuedTurn('S1', { phase: 'running', startedAt: NOW - 2_200, ...over });

describe('the next look at a running turn', () => {
    it('comes when its status message falls due, if that is sooner than the usual tick', () => {
        expect(nextLookIn(running(), 2_000, ports())).toBe(800);
        expect(nextLookIn(running({ startedAt: NOW - 500 }), 2_000, ports())).toBe(2_000);
    });

    it('comes at the usual tick once the status is due (this tick posts it) or shown', () => {
        expect(nextLookIn(running({ startedAt: NOW - 3_000 }), 2_000, ports())).toBe(2_000);
        expect(nextLookIn(running({ statusMessageId: 'M1' }), 2_000, ports())).toBe(2_000);
    });

    it('comes at once after a hand-over (which posts nothing) when the status is due already', () => {
        expect(nextLookIn(running({ startedAt: NOW - 3_200 }), 2_000, ports(), 0)).toBe(0);
        expect(nextLookIn(running({ startedAt: NOW - 2_200 }), 2_000, ports(), 0)).toBe(800);
        expect(nextLookIn(running({ startedAt: NOW - 3_200, statusMessageId: 'M1' }), 2_000, ports(), 0)).toBe(2_000);
    });

    it('comes at the usual tick when no status message is shown: progress off, a private answer, not started', () => {
        expect(nextLookIn(running(), 2_000, ports('off'))).toBe(2_000);
        expect(nextLookIn(running({ privateTo: 'U1' }), 2_000, ports())).toBe(2_000);
        expect(nextLookIn(running({ startedAt: undefined }), 1_000, ports())).toBe(1_000);
    });
});
