import { PersonalText, preferenceOf, renderFor } from '../../i18n/messages';
import { IModify, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage } from '@rocket.chat/apps-engine/definition/messages';
import { IRoom } from '@rocket.chat/apps-engine/definition/rooms';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { Block, blocksFor, ownedBy } from '../../delivery/blocks';
import { ButtonsView, LiveChatPort, PostedMessage, PostOptions, ReactionsUnsupported, ReplyTarget } from '../../delivery/chatPort';
import { BotMessageKind, markOf, MessageMark } from '../../delivery/messageKind';
import { isVisibleNow } from '../../delivery/visibility';

type SetBlocks = { setBlocks(blocks: unknown): unknown };

/** ChatPort on the engine's accessors: posts, edits and removes as the app's bot user. */
export class EngineChat implements LiveChatPort {
    constructor(
        private readonly read: IRead,
        private readonly modify: IModify,
        private readonly bot: IUser,
        /** The app's id: a private notice's buttons name it (see `ownedBy`). */
        private readonly appId: string,
        private readonly knownRoom?: IRoom,
    ) {}

    public async post(target: ReplyTarget, text: string, kind: BotMessageKind, opts: PostOptions = {}): Promise<string> {
        const room = await this.room(target.roomId);
        const builder = this.modify.getCreator().startMessage().setSender(this.bot).setRoom(room).setText(text).setGroupable(false);
        if (target.threadId) {
            builder.setThreadId(target.threadId);
        }
        this.setBlocks(builder, blocksFor(text, { kind, turnId: opts.turnId }, opts.buttons));
        return this.modify.getCreator().finish(builder);
    }

    public async edit(messageId: string, roomId: string, text: string, mark: MessageMark | undefined, buttons?: ButtonsView): Promise<void> {
        const builder = await this.modify.getUpdater().message(messageId, this.bot);
        // The updater sends only what changed; naming the room keeps older servers' full conversion happy.
        builder
            .setEditor(this.bot)
            .setRoom(await this.room(roomId))
            .setText(text);
        this.setBlocks(builder, blocksFor(text, mark, buttons) ?? []);
        await this.modify.getUpdater().finish(builder);
    }

    /** Puts a line above an answer of the bot, keeping its text (an undone exchange's mark): the updater's read is the only one. */
    public async prepend(messageId: string, roomId: string, line: string): Promise<void> {
        const builder = await this.modify.getUpdater().message(messageId, this.bot);
        const text = builder.getText() ?? '';
        builder
            .setEditor(this.bot)
            .setRoom(await this.room(roomId))
            .setText(`${line}\n\n${text}`);
        await this.modify.getUpdater().finish(builder);
    }

    public async remove(messageId: string, roomId?: string): Promise<void> {
        // The server finds the message by id; a full read of it first would only cost a call.
        const message = { id: messageId, room: await this.room(roomId ?? this.knownRoom?.id ?? ''), sender: this.bot } as IMessage;
        await this.modify.getDeleter().deleteMessage(message, this.bot);
    }

    public async react(messageId: string, emoji: string, on: boolean): Promise<void> {
        // Always as the bot: the updater would react as any user id it is given.
        const updater = this.modify.getUpdater().getMessageUpdater();
        const reaction = emoji as `:${string}:`;
        try {
            await (on ? updater.addReaction(messageId, this.bot.id, reaction) : updater.removeReaction(messageId, this.bot.id, reaction));
        } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            // Engines 1.58.x and 1.59.0 never create the updater their ModifyUpdater declares
            // (server/accessors/ModifyUpdater.js): the engine's accessor walk reads the method off `undefined`.
            if (/reading '(add|remove)Reaction'|Invalid accessor method "(add|remove)Reaction"/.test(message)) {
                throw new ReactionsUnsupported(message);
            }
            throw error;
        }
    }

    public async typing(roomId: string): Promise<() => Promise<void>> {
        // The notifier shows the display name unless given the username.
        return this.modify.getNotifier().typing({ id: roomId, username: this.bot.username });
    }

    public async botMessages(target: ReplyTarget): Promise<PostedMessage[]> {
        type Found = {
            id?: string;
            text?: string;
            type?: string;
            createdAt?: Date | string;
            sender?: { _id?: string; id?: string };
            blocks?: unknown;
            _unmappedProperties_?: unknown;
        };
        const found: Found[] = target.threadId
            ? ((await this.read.getThreadReader().getThreadById(target.threadId)) ?? [])
            : await this.read.getRoomReader().getMessages(target.roomId, { limit: 50, sort: { createdAt: 'desc' }, showThreadMessages: false });
        const byId = new Map<string, PostedMessage>();
        for (const m of found) {
            if (!m.id || (m.sender?._id ?? m.sender?.id) !== this.bot.id || !isVisibleNow(m)) {
                continue;
            }
            byId.set(m.id, { id: m.id, text: m.text ?? '', createdAt: new Date(m.createdAt ?? 0).getTime(), mark: markOf(m.blocks) });
        }
        return [...byId.values()];
    }

    public async whisper(userId: string, target: ReplyTarget, personal: PersonalText, buttons?: ButtonsView): Promise<void> {
        const user = await this.read.getUserReader().getById(userId);
        // Only this person reads it: in their language (the user is read anyway, to notify them).
        const text = renderFor(personal, preferenceOf(user));
        const builder = this.modify
            .getCreator()
            .startMessage()
            .setSender(this.bot)
            .setRoom(await this.room(target.roomId))
            .setText(text)
            .setGroupable(false);
        if (target.threadId) {
            builder.setThreadId(target.threadId);
        }
        this.setBlocks(builder, ownedBy(blocksFor(text, buttons ? { kind: 'approval' } : undefined, buttons), this.appId));
        await this.modify.getNotifier().notifyUser(user, builder.getMessage());
    }

    /**
     * The room a message goes to. The server resolves a message's room by id alone, so
     * outside an event (in a scheduler job) the id is all the app sends: no read per post.
     */
    private async room(roomId: string): Promise<IRoom> {
        return this.knownRoom?.id === roomId ? this.knownRoom : ({ id: roomId } as IRoom);
    }

    private setBlocks(builder: unknown, blocks: Block[] | undefined): void {
        if (blocks) {
            (builder as SetBlocks).setBlocks(blocks);
        }
    }
}
