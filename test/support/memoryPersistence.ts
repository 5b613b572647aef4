import { IPersistence, IPersistenceRead } from '@rocket.chat/apps-engine/definition/accessors';
import { RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';

interface Row {
    id: string;
    data: object;
    associations: Array<{ model: string; id: string }>;
}

const plain = (a: RocketChatAssociationRecord) => ({ model: String(a.getModel()), id: a.getID() });
const same = (a: { model: string; id: string }, b: { model: string; id: string }) => a.model === b.model && a.id === b.id;

/**
 * The app persistence as Rocket.Chat's bridge implements it on MongoDB
 * (apps/meteor/app/apps/server/bridges/persistence.ts): reads and removals match records
 * holding all the given associations (`$all`), in insertion order; `updateByAssociations` is
 * an `updateOne` on the exact association array (same entries, same order): it changes the
 * first such record only, and otherwise upserts a new one. There is no unique index, so two
 * instances upserting at once both insert: {@link duplicate} makes that outcome.
 * Counts every call, so tests can hold a store to its budget.
 */
export class MemoryPersistence {
    public readonly rows = new Map<string, Row>();
    public calls: string[] = [];
    private next = 0;

    public readonly read: IPersistenceRead = {
        read: async (id: string) => {
            this.calls.push('read');
            return structuredClone(this.rows.get(id)?.data) as object;
        },
        readByAssociation: async (association: RocketChatAssociationRecord) => {
            this.calls.push('readByAssociations');
            return this.all([association]).map((r) => structuredClone(r.data));
        },
        readByAssociations: async (associations: RocketChatAssociationRecord[]) => {
            this.calls.push('readByAssociations');
            return this.all(associations).map((r) => structuredClone(r.data));
        },
    };

    public readonly write: IPersistence = {
        create: async (data: object) => {
            this.calls.push('create');
            return this.insert(data, []);
        },
        createWithAssociation: async (data: object, association: RocketChatAssociationRecord) => {
            this.calls.push('create');
            return this.insert(data, [association]);
        },
        createWithAssociations: async (data: object, associations: RocketChatAssociationRecord[]) => {
            this.calls.push('create');
            return this.insert(data, associations);
        },
        update: async (id: string, data: object, upsert?: boolean) => {
            this.calls.push('update');
            const row = this.rows.get(id);
            if (row) {
                row.data = structuredClone(data);
            } else if (upsert) {
                this.rows.set(id, { id, data: structuredClone(data), associations: [] });
            }
            return id;
        },
        updateByAssociation: async (association: RocketChatAssociationRecord, data: object, upsert?: boolean) => this.updateExact([association], data, upsert),
        updateByAssociations: async (associations: RocketChatAssociationRecord[], data: object, upsert?: boolean) =>
            this.updateExact(associations, data, upsert),
        remove: async (id: string) => {
            this.calls.push('remove');
            const row = this.rows.get(id);
            this.rows.delete(id);
            return row?.data as object;
        },
        removeByAssociation: async (association: RocketChatAssociationRecord) => this.removeAll([association]),
        removeByAssociations: async (associations: RocketChatAssociationRecord[]) => this.removeAll(associations),
    };

    /** Records whose association ids start with `prefix`. */
    public withAssociation(prefix: string): object[] {
        return [...this.rows.values()].filter((r) => r.associations.some((a) => a.id.startsWith(prefix))).map((r) => r.data);
    }

    /**
     * The outcome of two instances upserting the same new record at once: a second record with
     * the associations of the first one holding `associationId` (and matching `where`), its data
     * that record's with `override` on top. It comes after the first, so updates keep going to the first.
     */
    public duplicate(associationId: string, override: object = {}, where: (data: Record<string, unknown>) => boolean = () => true): string {
        const original = [...this.rows.values()].find((r) => r.associations.some((a) => a.id === associationId) && where(r.data as Record<string, unknown>));
        if (!original) {
            throw new Error(`no record holds ${associationId}`);
        }
        const id = `r${++this.next}`;
        this.rows.set(id, {
            id,
            data: { ...structuredClone(original.data), ...structuredClone(override) },
            associations: original.associations.map((a) => ({ ...a })),
        });
        return id;
    }

    /** Adds a record as an older version of the app wrote it. */
    public seed(data: object, associations: RocketChatAssociationRecord[]): void {
        this.insert(data, associations);
    }

    public resetCalls(): void {
        this.calls = [];
    }

    private insert(data: object, associations: RocketChatAssociationRecord[]): string {
        const id = `r${++this.next}`;
        this.rows.set(id, { id, data: structuredClone(data), associations: associations.map(plain) });
        return id;
    }

    private all(associations: RocketChatAssociationRecord[]): Row[] {
        const wanted = associations.map(plain);
        return [...this.rows.values()].filter((r) => wanted.every((w) => r.associations.some((a) => same(a, w))));
    }

    private async updateExact(associations: RocketChatAssociationRecord[], data: object, upsert?: boolean): Promise<string> {
        this.calls.push('updateByAssociations');
        const wanted = associations.map(plain);
        // `updateOne`: the first exact match only; a duplicate beside it keeps its data.
        const first = [...this.rows.values()].find((r) => r.associations.length === wanted.length && r.associations.every((a, i) => same(a, wanted[i])));
        if (!first) {
            if (!upsert) {
                throw new Error('no record matches the associations');
            }
            return this.insert(data, associations);
        }
        first.data = structuredClone(data);
        return first.id;
    }

    private async removeAll(associations: RocketChatAssociationRecord[]): Promise<object[]> {
        this.calls.push('removeByAssociations');
        const matched = this.all(associations);
        matched.forEach((r) => this.rows.delete(r.id));
        return matched.map((r) => r.data);
    }
}
