/**
 * Whether a message read back from Rocket.Chat is what people see now. The server's thread
 * read (`getThreadById`: `{$or: [{_id}, {tmid}]}`) also returns the hidden copies it keeps
 * of edited messages (`_hidden`, with Message_KeepHistory) and deleted messages kept as
 * `t: 'rm'`; the message converter passes fields it does not map, like `_hidden`, under
 * `_unmappedProperties_`.
 */
export function isVisibleNow(m: { type?: string; _hidden?: unknown; _unmappedProperties_?: unknown }): boolean {
    const unmapped = (m._unmappedProperties_ ?? {}) as { _hidden?: unknown; t?: unknown };
    if (m._hidden === true || unmapped._hidden === true) {
        return false;
    }
    return m.type !== 'rm' && unmapped.t !== 'rm';
}
