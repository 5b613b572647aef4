/** What the app needs to know about the Hermes it talks to, from /health and /v1/capabilities. */
export interface HermesCapabilities {
    version?: string;
    /** Runs with status, events, stop and approvals: the full turn. */
    runs: boolean;
    /** Runs load the session's history themselves (newer servers); v0.18.2 needs it sent. */
    runsLoadHistory: boolean;
    /** A running run takes more input (`POST /v1/runs/{id}/steer`, newer servers; absent on v0.18.2). */
    steer?: boolean;
}

export const NO_CAPABILITIES: HermesCapabilities = { runs: false, runsLoadHistory: false };

/**
 * Reads the capabilities document. v0.18.2 lists `run_submission`, `run_status`,
 * `run_events_sse`, `run_stop` and `run_approval_response`; servers that also list the steer
 * endpoint are the newer line that loads run history and keeps durable idempotency keys.
 */
export function parseCapabilities(doc: unknown, version?: string): HermesCapabilities {
    const d = doc as { features?: Record<string, unknown>; endpoints?: Record<string, unknown> } | undefined;
    const f = d?.features ?? {};
    const runs = ['run_submission', 'run_status', 'run_events_sse', 'run_stop', 'run_approval_response'].every((k) => f[k] === true);
    const steer = runs && (f.run_steer === true || Boolean(d?.endpoints && 'run_steer' in d.endpoints));
    return { version, runs, runsLoadHistory: steer, steer };
}

export type TransportChoice = 'runs' | 'chat';

export function chooseTransport(setting: 'auto' | 'runs' | 'chat', caps: HermesCapabilities): TransportChoice {
    if (setting !== 'auto') {
        return setting;
    }
    return caps.runs ? 'runs' : 'chat';
}
