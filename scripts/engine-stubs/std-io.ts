// Stand-in for jsr:@std/io, which cannot be fetched offline (jsr.io is unreachable).
// The runtime only uses writeAll(Deno.stdout | Deno.stderr, bytes) (lib/messenger.ts,
// lib/metricsCollector.ts); a short write must be retried until every byte is out, or the
// JSON-RPC stream to the engine gets corrupted.

export interface Writer {
    write(p: Uint8Array): Promise<number>;
}

export async function writeAll(writer: Writer, data: Uint8Array): Promise<void> {
    let written = 0;
    while (written < data.length) {
        written += await writer.write(data.subarray(written));
    }
}
