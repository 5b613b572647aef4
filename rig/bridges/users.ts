import { IUser, IUserCreationOptions, UserType } from '@rocket.chat/apps-engine/definition/users';
import { UserBridge } from '@rocket.chat/apps-engine/server/bridges';
import type { RigServer } from '../server';

export class RigUserBridge extends UserBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async getById(id: string, _appId: string): Promise<IUser> {
        this.rig.calls.record('read', 'user.getById');
        return this.rig.convert.userById(id) as IUser;
    }

    protected async getByUsername(username: string, _appId: string): Promise<IUser> {
        this.rig.calls.record('read', 'user.getByUsername');
        const user = this.rig.store.userByUsername(username);
        return (user ? this.rig.convert.user(user) : undefined) as IUser;
    }

    protected async getAppUser(appId?: string): Promise<IUser | undefined> {
        this.rig.calls.record('read', 'user.getAppUser');
        const user = [...this.rig.store.users.values()].find((u) => u.type === 'app' && u.appId === appId);
        return user ? this.rig.convert.user(user) : undefined;
    }

    protected async getActiveUserCount(): Promise<number> {
        return this.rig.store.users.size;
    }

    protected async getUserUnreadMessageCount(): Promise<number> {
        return 0;
    }

    /** The rooms a user is subscribed to: one read whose cost follows that user's room count. */
    protected async getUserRoomIds(userId: string, _appId: string): Promise<string[]> {
        this.rig.calls.record('read', 'user.getUserRoomIds');
        return [...this.rig.store.rooms.values()].filter((r) => r.members.has(userId)).map((r) => r.id);
    }

    protected async create(data: Partial<IUser>, appId: string, _options?: IUserCreationOptions): Promise<string> {
        this.rig.calls.record('write', 'user.create');
        const isApp = data.type === UserType.APP;
        return this.rig.store.addUser({
            username: data.username ?? `user-${Date.now()}`,
            name: data.name ?? data.username ?? '',
            type: isApp ? 'app' : data.type === UserType.BOT ? 'bot' : 'user',
            appId: isApp ? appId : undefined,
            roles: data.roles ?? (isApp ? ['app'] : ['user']),
        }).id;
    }

    protected async remove(user: IUser, _appId: string): Promise<boolean> {
        return this.rig.store.users.delete(user.id);
    }

    protected async update(_user: IUser, _updates: Partial<IUser>, _appId: string): Promise<boolean> {
        return true;
    }

    protected async deleteUsersCreatedByApp(appId: string): Promise<boolean> {
        for (const [id, user] of this.rig.store.users) {
            if (user.appId === appId) {
                this.rig.store.users.delete(id);
            }
        }
        return true;
    }

    protected async deactivate(): Promise<boolean> {
        return true;
    }
}
