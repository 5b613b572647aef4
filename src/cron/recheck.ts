import { AdmissionConfig, Admitted, budgetHit, roomRules } from '../admission/turnAdmission';
import { commandAllowed } from '../admission/textCommand';
import { AccessRefusal } from '../admission/access';
import { HermesConfig } from '../settings/config';
import { BudgetHit, UsagePort } from '../usage/usage';
import { CronJob, PauseReason } from './job';

/** What a firing reads the owner's rights from: the turn admission's settings and who may schedule. */
type CronRules = AdmissionConfig & Pick<HermesConfig, 'cronUserIds' | 'commandAllowlist'>;

export interface RecheckPorts {
    config: CronRules;
    /**
     * The job's room, its owner and the bot as the server has them now (the gate's rule,
     * security/access.ts, with `post` needed): why the owner may no longer deliver there, or
     * undefined when they still may.
     */
    standing: (job: CronJob) => Promise<AccessRefusal | 'bot-cannot-post' | undefined>;
    /** Today's usage, for the daily budgets (read only when one is set). */
    usage: UsagePort | undefined;
    now: () => number;
}

export type RecheckRefusal = { admit: false; pause: PauseReason } | { admit: false; budget: BudgetHit };
export type Recheck = Admitted | RecheckRefusal;

/**
 * Everything a job was allowed when it was created, asked again before each run: a job runs
 * with its owner's rights, and those can be taken away (allowed_user_ids, cron_user_ids,
 * command_allowlist, the room's membership or read-only flag, the bot removed from the room,
 * room_policies). What no longer holds pauses the job; a used-up daily budget skips only this
 * time. The room's policy (`off`, its profile, model, instruction) and the budgets are the turn
 * admission's (admission/turnAdmission.ts), as for a mention; what needs no read goes first.
 */
export async function recheckJob(job: CronJob, ports: RecheckPorts): Promise<Recheck> {
    const c = ports.config;
    const owner = { id: job.ownerId, username: job.ownerUsername };
    // A job is a cron command's lasting effect: it keeps running only while its owner could still create it.
    if ((!c.adminUserIds.includes(owner.id) && !c.cronUserIds.includes(owner.id)) || !commandAllowed('cron', owner.id, c)) {
        return { admit: false, pause: 'owner-not-allowed' };
    }
    // The job kept whether its direct room is a 1:1 DM (no room policy) or a group DM (a room): 3 stands for "more than two".
    const ask = { source: 'cron' as const, asker: owner, room: { id: job.roomId, type: job.roomType, directMemberCount: job.kind === 'dm' ? 2 : 3 } };
    const rules = roomRules(ask, c);
    if (!rules.admit) {
        return { admit: false, pause: rules.reason === 'ignored-sender' || rules.reason === 'not-allowed' ? 'owner-not-allowed' : 'room-policy' };
    }
    const refusal = await ports.standing(job);
    if (refusal) {
        return { admit: false, pause: pauseFor(refusal) };
    }
    const hit = await budgetHit(ask, c, ports.usage, ports.now());
    return hit ? { admit: false, budget: hit } : rules;
}

/** The gate's refusal, as the reason `cron list` shows. */
function pauseFor(refusal: AccessRefusal | 'bot-cannot-post'): PauseReason {
    switch (refusal) {
        case 'bot-cannot-post':
            return 'bot-cannot-post';
        case 'caller-not-member':
            return 'owner-not-member';
        case 'may-not-post':
            return 'owner-cannot-post';
        case 'ignored-sender':
        case 'not-allowed':
        case 'own-command':
            return 'owner-not-allowed';
        default:
            // The room is gone, the bot left it, or it is no longer a room the app serves.
            return 'bot-not-member';
    }
}
