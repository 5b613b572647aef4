/** The log the core writes to. Messages are short strings of ids and counts, never message text. */
export interface LogPort {
    debug(message: string): void;
    info(message: string): void;
    warn(message: string): void;
    error(message: string): void;
}

/**
 * Wraps the app log so that no known secret and no Authorization value can reach it, even
 * through an error message a library produced. Defence in depth: callers already log ids only.
 */
export class SafeLog implements LogPort {
    private secrets: string[] = [];

    constructor(private readonly sink: LogPort) {}

    public setSecrets(secrets: Array<string | undefined>): void {
        this.secrets = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4);
    }

    public debug(message: string): void {
        this.sink.debug(this.clean(message));
    }

    public info(message: string): void {
        this.sink.info(this.clean(message));
    }

    public warn(message: string): void {
        this.sink.warn(this.clean(message));
    }

    public error(message: string): void {
        this.sink.error(this.clean(message));
    }

    public clean(message: string): string {
        let out = message.replace(/(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]');
        for (const secret of this.secrets) {
            out = out.split(secret).join('[redacted]');
        }
        return out;
    }
}
