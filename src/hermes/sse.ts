/** One server-sent event: the `event:` name (if any) and the joined `data:` lines. */
export interface SseFrame {
    event?: string;
    data: string;
}

/**
 * Most characters one frame may hold while it is being gathered (its unfinished line plus
 * its `data:` lines so far). A run's `run.completed` frame carries the whole answer, which
 * the app cuts at 100,000 characters anyway; a frame ten times that is not worth buffering.
 */
export const MAX_SSE_BUFFER_CHARS = 1024 * 1024;

/** A frame outgrew MAX_SSE_BUFFER_CHARS; the stream is useless from here on. */
export class SseLimitError extends Error {
    constructor(public readonly limit: number) {
        super(`SSE frame larger than ${limit} characters`);
        this.name = 'SseLimitError';
    }
}

const LF = 10;
const CR = 13;

/**
 * Incremental SSE parser (WHATWG rules that Hermes uses): lines end at \r\n, \n or \r;
 * frames end at a blank line, `data:` lines join with \n, `:` lines are comments
 * (keepalives, `: stream closed`).
 *
 * Each push scans only the new chunk: the unfinished line is kept as a list of pieces and
 * joined once, when its end arrives, so a frame that trickles in byte by byte costs time
 * in proportion to its size, not its square.
 */
export class SseParser {
    /** The unfinished line, in the pieces it arrived in. */
    private partial: string[] = [];
    private partialLength = 0;
    /** The previous chunk ended in \r: a \n starting the next one belongs to that line end. */
    private afterCr = false;
    private event: string | undefined;
    private data: string[] = [];
    private dataLength = 0;

    constructor(private readonly maxChars = MAX_SSE_BUFFER_CHARS) {}

    public push(chunk: string): SseFrame[] {
        const frames: SseFrame[] = [];
        let start = 0;
        if (this.afterCr && chunk.length > 0) {
            this.afterCr = false;
            if (chunk.charCodeAt(0) === LF) {
                start = 1;
            }
        }
        for (let i = start; i < chunk.length; i++) {
            const code = chunk.charCodeAt(i);
            if (code !== LF && code !== CR) {
                continue;
            }
            const tail = chunk.slice(start, i);
            const line = this.partialLength === 0 ? tail : this.partial.join('') + tail;
            this.partial = [];
            this.partialLength = 0;
            this.line(line, frames);
            if (code === CR) {
                if (i + 1 === chunk.length) {
                    this.afterCr = true;
                } else if (chunk.charCodeAt(i + 1) === LF) {
                    i++;
                }
            }
            start = i + 1;
        }
        if (start < chunk.length) {
            const rest = chunk.slice(start);
            this.partial.push(rest);
            this.partialLength += rest.length;
            this.checkSize();
        }
        return frames;
    }

    private line(line: string, frames: SseFrame[]): void {
        if (line === '') {
            if (this.data.length > 0) {
                frames.push({ event: this.event, data: this.data.join('\n') });
            }
            this.event = undefined;
            this.data = [];
            this.dataLength = 0;
            return;
        }
        if (line.charCodeAt(0) === 58 /* : */) {
            return;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.charCodeAt(0) === 32 /* space */) {
            value = value.slice(1);
        }
        if (field === 'event') {
            this.event = value;
        } else if (field === 'data') {
            this.data.push(value);
            this.dataLength += value.length + 1;
            this.checkSize();
        }
    }

    private checkSize(): void {
        if (this.partialLength + this.dataLength > this.maxChars) {
            throw new SseLimitError(this.maxChars);
        }
    }
}
