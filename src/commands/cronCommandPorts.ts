/* What `/hermes cron …` (cronCommands.ts, cronAdd.ts) and the MCP tool `schedule_prompt` need of the engine. */
import { FirePorts } from '../cron/fire';
import { CronStore } from '../cron/job';
import { PostingRefusal } from '../admission/botPosting';
import { HermesConfig } from '../settings/config';

/** Where a job delivers: a room, or a thread in it. */
export interface Place {
    roomId: string;
    roomType: string;
    roomName?: string;
    threadId?: string;
    kind: 'dm' | 'room';
}

export interface CronCommandPorts {
    config: HermesConfig;
    store: CronStore;
    fire: FirePorts;
    /**
     * `--to #room`, `--to <thread link>`, `--to home`: a place the bot and the creator (`userId`)
     * are both in and the creator may post in, or undefined, the same for a place that does not
     * exist: a job must not deliver where its creator could not post, nor tell them what exists.
     */
    resolveTo: (spec: string, userId: string) => Promise<Place | undefined>;
    /** Why the server would refuse the bot's posts in the place's room now (read-only, muted, encrypted), if it would. */
    botCannotPost: (place: Place) => Promise<PostingRefusal | undefined>;
    now: () => number;
    /** The reader's language preference (every answer is private); absent: the server's. */
    language?: string;
}
