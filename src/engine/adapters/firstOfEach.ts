/**
 * The first record of each id, in the order read. Rocket.Chat's app persistence has no unique
 * index (apps/meteor/app/apps/server/bridges/persistence.ts): two instances upserting the same
 * new record at once both insert, and `updateByAssociations` (an updateOne) keeps updating the
 * first of the two; the other is a stale copy until a removal takes both.
 */
export function firstOfEach<T extends { id?: unknown }>(records: T[]): T[] {
    const seen = new Set<unknown>();
    return records.filter((r) => {
        const again = seen.has(r.id);
        seen.add(r.id);
        return !again;
    });
}
