import { ILogger } from '@rocket.chat/apps-engine/definition/accessors';

/**
 * The logger a scheduler job writes to, whichever engine runs it. From about 1.60 the engine's
 * Deno runtime calls a processor with `this` bound to the app wrapped for that one call
 * (`deno-runtime/handlers/scheduler-handler.ts`: `processor.processor.call(wrapAppForRequest(app,
 * request), …)`), whose `getLogger()` is the call's own log. 1.58 and 1.59 (Rocket.Chat 7.13 and
 * 8.0) call it as `processor.processor(…)`, so `this` is the processor object and has no
 * `getLogger`: there the app's own logger is the one the engine itself writes to for jobs.
 */
export function jobLogger(self: unknown, appLogger: () => ILogger): ILogger {
    const bound = (self as { getLogger?: unknown } | undefined)?.getLogger;
    return typeof bound === 'function' ? (bound.call(self) as ILogger) : appLogger();
}
