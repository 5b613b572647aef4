import { AppStatus } from '@rocket.chat/apps-engine/definition/AppStatus';
import { IAppInfo } from '@rocket.chat/apps-engine/definition/metadata';
import { ISetting } from '@rocket.chat/apps-engine/definition/settings';
import { ILoggerStorageEntry } from '@rocket.chat/apps-engine/server/logging';
import { IMarketplaceInfo } from '@rocket.chat/apps-engine/server/marketplace';
import { AppLogStorage, AppMetadataStorage, IAppStorageItem } from '@rocket.chat/apps-engine/server/storage';
import { AppSourceStorage } from '@rocket.chat/apps-engine/server/storage/AppSourceStorage';

/** The engine's app records, kept in memory for the life of a rig. */
export class MemoryMetadataStorage extends AppMetadataStorage {
    private readonly items = new Map<string, IAppStorageItem>();

    constructor() {
        super('memory');
    }

    public async create(item: IAppStorageItem): Promise<IAppStorageItem> {
        const stored = { ...item, _id: item.id, createdAt: new Date(), updatedAt: new Date() };
        this.items.set(item.id, stored);
        return stored;
    }

    public async retrieveOne(id: string): Promise<IAppStorageItem | null> {
        return this.items.get(id) ?? null;
    }

    public async retrieveAll(): Promise<Map<string, IAppStorageItem>> {
        return new Map(this.items);
    }

    public async retrieveAllPrivate(): Promise<Map<string, IAppStorageItem>> {
        return new Map(this.items);
    }

    public async remove(id: string): Promise<{ success: boolean }> {
        return { success: this.items.delete(id) };
    }

    public async updatePartialAndReturnDocument(item: Partial<IAppStorageItem>): Promise<IAppStorageItem> {
        const current = this.items.get(item.id as string);
        const next = { ...(current as IAppStorageItem), ...item, updatedAt: new Date() };
        this.items.set(next.id, next);
        return next;
    }

    public async updateStatus(id: string, status: AppStatus): Promise<boolean> {
        const item = this.items.get(id);
        if (item) {
            item.status = status;
        }
        return Boolean(item);
    }

    public async updateSetting(id: string, setting: ISetting): Promise<boolean> {
        const item = this.items.get(id);
        if (item) {
            item.settings[setting.id] = setting;
        }
        return Boolean(item);
    }

    public async updateAppInfo(id: string, info: IAppInfo): Promise<boolean> {
        const item = this.items.get(id);
        if (item) {
            item.info = info;
        }
        return Boolean(item);
    }

    public async updateMarketplaceInfo(id: string, marketplaceInfo: IMarketplaceInfo[]): Promise<boolean> {
        const item = this.items.get(id);
        if (item) {
            item.marketplaceInfo = marketplaceInfo;
        }
        return Boolean(item);
    }
}

/** The admin-visible app log: every entry the engine stores, kept so tests can read and scan it. */
export class MemoryLogStorage extends AppLogStorage {
    public readonly entries: ILoggerStorageEntry[] = [];
    private readonly listeners = new Set<(entry: ILoggerStorageEntry) => void>();

    constructor() {
        super('memory');
    }

    public onEntry(listener: (entry: ILoggerStorageEntry) => void): () => void {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
    }

    public async findPaginated(): Promise<{ logs: ILoggerStorageEntry[]; total: number }> {
        return { logs: [...this.entries], total: this.entries.length };
    }

    public async storeEntries(entry: ILoggerStorageEntry): Promise<ILoggerStorageEntry> {
        this.entries.push(entry);
        this.listeners.forEach((l) => l(entry));
        return entry;
    }

    public async getEntriesFor(appId: string): Promise<ILoggerStorageEntry[]> {
        return this.entries.filter((e) => e.appId === appId);
    }

    public async removeEntriesFor(appId: string): Promise<void> {
        for (let i = this.entries.length - 1; i >= 0; i--) {
            if (this.entries[i].appId === appId) {
                this.entries.splice(i, 1);
            }
        }
    }
}

export class MemorySourceStorage extends AppSourceStorage {
    private readonly zips = new Map<string, Buffer>();

    public async store(item: IAppStorageItem, zip: Buffer): Promise<string> {
        this.zips.set(item.id, zip);
        return item.id;
    }

    public async fetch(item: IAppStorageItem): Promise<Buffer> {
        const zip = this.zips.get(item.id);
        if (!zip) {
            throw new Error(`no package stored for ${item.id}`);
        }
        return zip;
    }

    public async update(item: IAppStorageItem, zip: Buffer): Promise<string> {
        return this.store(item, zip);
    }

    public async remove(item: IAppStorageItem): Promise<void> {
        this.zips.delete(item.id);
    }
}
