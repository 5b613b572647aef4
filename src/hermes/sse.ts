/** One server-sent event: the `event:` name (if any) and the joined `data:` lines. */
export interface SseFrame {
    event?: string;
    data: string;
}

/**
 * Incremental SSE parser (WHATWG rules that Hermes uses): frames end at a blank line,
 * `data:` lines join with \n, `:` lines are comments (keepalives, `: stream closed`).
 */
export class SseParser {
    private buffer = '';
    private event: string | undefined;
    private data: string[] = [];

    public push(chunk: string): SseFrame[] {
        this.buffer += chunk;
        const frames: SseFrame[] = [];
        let newline: number;
        while ((newline = this.buffer.search(/\r\n|\n|\r/)) !== -1) {
            const line = this.buffer.slice(0, newline);
            const sepLength = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
            this.buffer = this.buffer.slice(newline + sepLength);
            if (line === '') {
                if (this.data.length > 0) {
                    frames.push({ event: this.event, data: this.data.join('\n') });
                }
                this.event = undefined;
                this.data = [];
                continue;
            }
            if (line.startsWith(':')) {
                continue;
            }
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') {
                this.event = value;
            } else if (field === 'data') {
                this.data.push(value);
            }
        }
        return frames;
    }
}
