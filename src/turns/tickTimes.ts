/**
 * How often a running turn's chain ticks. Rocket.Chat's scheduler runs one job per
 * processor at a time (Agenda, concurrency 1), so a tick never waits on Hermes: it looks
 * once, acts, and comes back. A turn whose stream lives in this process is woken by the
 * stream when it ends or asks for an approval, so it ticks seldom; one that must poll
 * Hermes ticks more often.
 */
export const LIVE_TICK_MS = 2_000;
export const POLL_TICK_MS = 1_000;
/** A tick that finds another tick of its turn still working in this process comes back this much later. */
export const BUSY_RETRY_MS = 500;
/** A running turn writes its record at least this often, so the sweep can tell a live chain from a lost one. */
export const HEARTBEAT_MS = 10_000;

/**
 * How long a turn's steps may stay inside its message event (quick.ts): a turn Hermes answers
 * within this costs no scheduler job; a longer one is handed to its chain of ticks. Short, because
 * the engine runs the next app's handler of the same message only after this one returns.
 */
export const QUICK_MS = 3_000;
/**
 * How long one call (a message event) may go on starting the turns its quick turns wake, and
 * when it stops carrying any: the engine gives a call 30 s.
 */
export const CARRY_MS = 15_000;
export const CALL_MS = 20_000;
