// Stand-in for jsr:@std/streams, which cannot be fetched offline (jsr.io is unreachable).
// The runtime only uses toArrayBuffer(file.readable) (handlers/app/handleUploadEvents.ts).

export async function toArrayBuffer(readableStream: ReadableStream<Uint8Array>): Promise<ArrayBuffer> {
    const chunks: Uint8Array[] = [];
    let length = 0;
    for await (const chunk of readableStream) {
        chunks.push(chunk);
        length += chunk.length;
    }

    const result = new Uint8Array(length);
    let offset = 0;
    for (const chunk of chunks) {
        result.set(chunk, offset);
        offset += chunk.length;
    }

    return result.buffer;
}
