import { RocketChatAssociationRecord } from '@rocket.chat/apps-engine/definition/metadata';
import { PersistenceBridge } from '@rocket.chat/apps-engine/server/bridges';
import { randomId } from '../store';
import type { RigServer } from '../server';

interface Record {
    id: string;
    appId: string;
    data: object;
    associations: RocketChatAssociationRecord[];
}

function sameAssociation(a: RocketChatAssociationRecord, b: RocketChatAssociationRecord): boolean {
    return a.getModel() === b.getModel() && a.getID() === b.getID();
}

const keyOf = (a: RocketChatAssociationRecord) => `${a.getModel()}\u0000${a.getID()}`;

/**
 * The apps' key-value store, following apps/meteor/app/apps/server/bridges/persistence.ts:
 * reads and removals match records holding all the given associations (`$all`), but
 * updateByAssociations queries `{ appId, associations }`, an exact array match (same
 * associations, same order, nothing more), and updates one record.
 */
export class RigPersistenceBridge extends PersistenceBridge {
    /** Shared with a peer instance's (one MongoDB). Read by tests; changed only through this class. */
    public readonly records: Map<string, Record>;
    /**
     * The ids of the records holding each association, in insertion order, as the server's index
     * on `{ appId, associations }` (AppsPersistence model) answers a query without a scan: a rig
     * scanning every record made each call cost its whole store, which the bench, load and soak
     * then counted as the app's time. A record's associations never change once written.
     */
    private readonly byAssociation: Map<string, Set<string>>;

    constructor(private readonly rig: RigServer) {
        super();
        this.records = rig.peer?.bridges.persistence.records ?? new Map<string, Record>();
        this.byAssociation = rig.peer?.bridges.persistence.byAssociation ?? new Map<string, Set<string>>();
    }

    protected async purge(appId: string): Promise<void> {
        for (const [id, record] of this.records) {
            if (record.appId === appId) {
                this.drop(id);
            }
        }
    }

    protected async create(data: object, appId: string): Promise<string> {
        return this.createWithAssociations(data, [], appId);
    }

    protected async createWithAssociations(data: object, associations: RocketChatAssociationRecord[], appId: string): Promise<string> {
        this.rig.calls.record('persistence', 'create', describeAssociations(associations));
        assertObject(data);
        return this.insert(data, associations, appId);
    }

    private insert(data: object, associations: RocketChatAssociationRecord[], appId: string): string {
        const id = randomId();
        const record = { id, appId, data: structuredClone(data), associations: associations.map(revive) };
        this.records.set(id, record);
        for (const a of record.associations) {
            const key = keyOf(a);
            const ids = this.byAssociation.get(key) ?? new Set<string>();
            ids.add(id);
            this.byAssociation.set(key, ids);
        }
        return id;
    }

    private drop(id: string): void {
        const record = this.records.get(id);
        this.records.delete(id);
        for (const a of record?.associations ?? []) {
            const ids = this.byAssociation.get(keyOf(a));
            ids?.delete(id);
            if (ids?.size === 0) {
                this.byAssociation.delete(keyOf(a));
            }
        }
    }

    /** The app's records holding every given association (`$all`), in insertion order; all of the app's for none. */
    private match(associations: RocketChatAssociationRecord[], appId: string): Record[] {
        const wanted = associations.map(revive);
        if (wanted.length === 0) {
            return [...this.records.values()].filter((r) => r.appId === appId);
        }
        const sets = wanted.map((w) => this.byAssociation.get(keyOf(w)) ?? new Set<string>());
        const smallest = sets.reduce((a, b) => (b.size < a.size ? b : a));
        const found: Record[] = [];
        for (const id of smallest) {
            const r = this.records.get(id);
            if (r && r.appId === appId && sets.every((set) => set.has(id))) {
                found.push(r);
            }
        }
        return found;
    }

    protected async readById(id: string, appId: string): Promise<object> {
        this.rig.calls.record('persistence', 'readById');
        const record = this.records.get(id);
        return (record && record.appId === appId ? structuredClone(record.data) : undefined) as object;
    }

    protected async readByAssociations(associations: RocketChatAssociationRecord[], appId: string): Promise<object[]> {
        this.rig.calls.record('persistence', 'readByAssociations', describeAssociations(associations));
        return this.match(associations, appId).map((r) => structuredClone(r.data));
    }

    protected async remove(id: string, appId: string): Promise<object | undefined> {
        this.rig.calls.record('persistence', 'remove');
        const record = this.records.get(id);
        if (!record || record.appId !== appId) {
            return undefined;
        }
        this.drop(id);
        return record.data;
    }

    protected async removeByAssociations(associations: RocketChatAssociationRecord[], appId: string): Promise<object[] | undefined> {
        this.rig.calls.record('persistence', 'removeByAssociations', describeAssociations(associations));
        const matched = this.match(associations, appId);
        if (this.rig.strict && matched.length === 0) {
            // The server answers undefined, not [], when nothing matched.
            return undefined;
        }
        matched.forEach((r) => this.drop(r.id));
        return matched.map((r) => r.data);
    }

    protected async update(id: string, data: object, upsert: boolean, appId: string): Promise<string> {
        this.rig.calls.record('persistence', 'update');
        if (this.rig.strict) {
            // The server's bridge does not implement updates by id.
            assertObject(data);
            throw new Error('Not implemented.');
        }
        const record = this.records.get(id);
        if (!record) {
            if (!upsert) {
                throw new Error(`No record ${id} to update`);
            }
            this.records.set(id, { id, appId, data: structuredClone(data), associations: [] });
            return id;
        }
        record.data = structuredClone(data);
        return id;
    }

    protected async updateByAssociations(associations: RocketChatAssociationRecord[], data: object, upsert: boolean, appId: string): Promise<string> {
        this.rig.calls.record('persistence', 'updateByAssociations', describeAssociations(associations));
        if (!this.rig.strict) {
            const matched = this.match(associations, appId);
            if (matched.length === 0) {
                if (!upsert) {
                    throw new Error('No record matches the associations');
                }
                return this.insert(data, associations, appId);
            }
            matched.forEach((r) => {
                r.data = structuredClone(data);
            });
            return matched[0].id;
        }
        assertObject(data);
        // updateOne({ appId, associations }, { $set: { data } }, { upsert }): the first record whose array equals the given one.
        const wanted = associations.map(revive);
        const record = this.match(wanted, appId).find((r) => sameAssociations(r.associations, wanted));
        if (!record) {
            // Without upsert nothing happens and nothing is said; with it, a new record holds exactly these associations.
            return upsert ? this.insert(data, associations, appId) : '';
        }
        record.data = structuredClone(data);
        // The server returns the upserted id, or '' when it updated an existing record.
        return '';
    }
}

/** The associations of a call, for the call log's timeline: `model:id` with random ids shown as `<id>`. */
function describeAssociations(associations: RocketChatAssociationRecord[]): string {
    return associations
        .map(revive)
        .map((a) => `${a.getModel()}:${a.getID().replace(/[A-Za-z0-9]{17}|[0-9a-f]{24}/g, '<id>')}`)
        .join(' + ');
}

/** Mongo's equality on an array of sub-documents: same length, same order, each { model, id } equal. */
function sameAssociations(stored: RocketChatAssociationRecord[], wanted: RocketChatAssociationRecord[]): boolean {
    return stored.length === wanted.length && stored.every((a, i) => sameAssociation(a, wanted[i]));
}

function assertObject(data: unknown): void {
    if (typeof data !== 'object') {
        throw new Error('Attempted to store an invalid data type, it must be an object.');
    }
}

/** Associations cross the Deno boundary as plain objects; give them their methods back. */
function revive(a: RocketChatAssociationRecord | { model: string; id: string }): RocketChatAssociationRecord {
    if (typeof (a as RocketChatAssociationRecord).getModel === 'function') {
        return a as RocketChatAssociationRecord;
    }
    const plain = a as { model: string; id: string };
    return new RocketChatAssociationRecord(plain.model as never, plain.id);
}
