/**
 * Scripted overrides (`hermes.script(rule)`): how a test makes the fake
 * misbehave in the specific ways real Hermes (or the network) can.
 *
 * Rules are tried in the order they were added; the first one that matches
 * and still has uses is consumed. See `FakeHermesRule` in types.ts for the
 * fields. Replacement responses keep Hermes's wire details: the error
 * shorthands produce the exact envelopes (and `Retry-After: 1` where Hermes
 * sends it), JSON bodies go through pyJson, the security headers are added as
 * Hermes's middleware would.
 */
import { errors, openaiError } from './errors';
import { pyJson } from './pyJson';
import { HeaderList, resetSocket, sendRaw, SseWriter } from './respond';
import type { FakeHermesRule, RecordedRequest, RequestCtx, ResolvedOptions, TurnModifiers } from './types';

interface Entry {
    rule: FakeHermesRule;
    remaining: number;
}

export class RuleBook {
    private entries: Entry[] = [];

    add(rule: FakeHermesRule): void {
        if (!rule || (typeof rule.path !== 'string' && !(rule.path instanceof RegExp))) {
            throw new Error('fakeHermes.script: rule.path must be a string or RegExp');
        }
        this.entries.push({ rule, remaining: rule.always ? Infinity : Math.max(1, rule.times ?? 1) });
    }

    clear(): void {
        this.entries = [];
    }

    /** Rules not used up yet (to assert a scripted failure really happened). */
    pending(): FakeHermesRule[] {
        return this.entries.filter((e) => e.remaining > 0).map((e) => e.rule);
    }

    take(req: RecordedRequest): FakeHermesRule | undefined {
        for (const entry of this.entries) {
            if (entry.remaining <= 0 || !matches(entry.rule, req)) continue;
            entry.remaining -= 1;
            return entry.rule;
        }
        return undefined;
    }
}

function matches(rule: FakeHermesRule, req: RecordedRequest): boolean {
    if (rule.method && rule.method.toUpperCase() !== req.method) return false;
    if (typeof rule.path === 'string') {
        if (rule.path !== req.path) return false;
    } else {
        rule.path.lastIndex = 0;
        if (!rule.path.test(req.path)) return false;
    }
    try {
        if (rule.bodyMatch && !rule.bodyMatch(req.json, req.body)) return false;
        if (rule.match && !rule.match(req)) return false;
    } catch {
        return false;
    }
    return true;
}

/** Does the rule replace the response (vs. modify the normal chat/run handling)? */
export function replacesResponse(rule: FakeHermesRule, agentRoute: boolean): boolean {
    if (rule.error === 'agent_incomplete') return !agentRoute;
    return (
        rule.status !== undefined ||
        rule.body !== undefined ||
        rule.error !== undefined ||
        rule.redirect !== undefined ||
        Boolean(rule.malformedJson) ||
        Boolean(rule.destroy) ||
        rule.sse !== undefined
    );
}

export function modifiersOf(rule: FakeHermesRule | undefined): TurnModifiers {
    if (!rule) return {};
    return {
        reply: rule.reply,
        rotateSessionTo: rule.rotateSessionTo,
        finishReason: rule.finishReason,
        errorMessage: rule.errorMessage,
        agentIncomplete: rule.error === 'agent_incomplete',
    };
}

/** Send the replacement response of `rule`. */
export function applyReplacement(ctx: RequestCtx, rule: FakeHermesRule, opts: ResolvedOptions): void {
    const extra: HeaderList = Object.entries(rule.headers ?? {});
    if (rule.sse) {
        const sse = new SseWriter(ctx.res, extra, opts.keepaliveMs);
        for (const frame of rule.sse) {
            if (typeof frame === 'string') sse.write(frame);
            else sse.frame(frame.data, frame.event);
        }
        // Mid-stream drop: close the connection after the frames (FIN, so they all
        // arrive) without the terminating chunk; the client sees a cut-off body.
        if (rule.destroy) ctx.req.socket.end();
        else sse.end();
        return;
    }
    if (rule.destroy) return resetSocket(ctx.req);
    if (rule.redirect !== undefined) {
        return sendRaw(ctx.res, rule.status ?? 302, '302: Found', [['Location', rule.redirect], ...extra], 'text/plain; charset=utf-8', false);
    }
    if (rule.malformedJson) {
        const body = rule.body === undefined ? '{"id": "chatcmpl-' : String(rule.body);
        return sendRaw(ctx.res, rule.status ?? 200, body, extra, 'application/json; charset=utf-8', true);
    }
    if (rule.error) {
        const message = rule.errorMessage;
        switch (rule.error) {
            case 'body_too_large':
                return json(ctx, rule.status ?? 413, rule.body ?? errors.bodyTooLarge(), extra);
            case 'rate_limit_exceeded':
                return json(ctx, rule.status ?? 429, rule.body ?? errors.tooManyRuns(opts.maxConcurrentRuns), [['Retry-After', '1'], ...extra]);
            case 'gateway_draining':
                return json(ctx, rule.status ?? 503, rule.body ?? errors.draining(), [['Retry-After', '1'], ...extra]);
            case 'internal_error':
                return json(ctx, rule.status ?? 500, rule.body ?? errors.internal(message ?? 'scripted failure'), extra);
            case 'agent_incomplete':
                return json(
                    ctx,
                    rule.status ?? 502,
                    rule.body ??
                        openaiError(message ?? 'Agent run did not produce a response.', {
                            type: 'server_error',
                            code: 'agent_incomplete',
                        }),
                    extra,
                );
        }
    }
    return json(ctx, rule.status ?? 200, rule.body ?? '', extra);
}

function json(ctx: RequestCtx, status: number, body: unknown, pre: HeaderList): void {
    sendRaw(ctx.res, status, typeof body === 'string' ? body : pyJson(body), pre, 'application/json; charset=utf-8', true);
}
