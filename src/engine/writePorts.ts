import { randomBytes } from 'crypto';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { CronCommandPorts } from '../commands/cronCommandPorts';
import { addedText, prepareJob } from '../commands/cronAdd';
import { messageLink } from '../delivery/quote';
import { translator } from '../i18n/messages';
import { ApproveWritePorts } from '../mcp/approveWrite';
import { WritePort } from '../mcp/writeTools';
import { WriteRequest, writeApprovalView, WriteTarget } from '../mcp/writeRequest';
import { HermesConfig } from '../settings/config';
import { actingPlace } from './adapters/cronTargets';
import { tokenDigest, WriteRequests } from './adapters/writeRequests';
import type { CallPorts } from './callPorts';
import { cronCommandPorts } from './cronPorts';

/*
 * The MCP write tools on the engine (mcp/writeTools.ts, mcp/approveWrite.ts). Cost of a
 * proposal: the token's requests (one read), the target (room, person and thread root side by
 * side, then membership, posting rights and the bot's own: 3–4 round trips), one post and one
 * write; a schedule adds the
 * cron checks (the jobs list). An approval: the request, a claim, the target again, the post
 * or the job, the record and the edit.
 */

function cronPorts(call: CallPorts, config: HermesConfig, language?: string): CronCommandPorts {
    return { ...cronCommandPorts(call, config), config, now: Date.now, language };
}

/** The job `schedule_prompt` would add: `/hermes cron add`'s checks on the schedule's words, then the prompt. */
async function job(
    call: CallPorts,
    config: HermesConfig,
    who: { id: string; username: string },
    target: WriteTarget,
    schedule: string,
    prompt: string,
    language?: string,
) {
    const admin = config.adminUserIds.includes(who.id);
    const prepared = await prepareJob(`${schedule} ${prompt}`, { place: async () => target }, who, admin, cronPorts(call, config, language));
    if ('job' in prepared && prepared.job.prompt !== prompt.trim()) {
        // The schedule's words ran into the prompt, or stopped short of its end: not what the person will be shown.
        return { refusal: `The schedule "${schedule.slice(0, 80)}" was not understood as a whole; use /hermes cron add's words.` };
    }
    return prepared;
}

export function writePorts(call: CallPorts, config: HermesConfig): WritePort {
    const bot = call.bot as IUser;
    const requests = new WriteRequests(call.read.getPersistenceReader(), call.persistence);
    return {
        target: async (userId, roomId, threadId) => {
            const found = await actingPlace(call.read, { roomId, threadId, userId }, bot, config);
            return found.ok ? { ok: true, target: found.place, username: found.username } : found;
        },
        scheduleRefusal: async (who, target, schedule, prompt) => {
            const prepared = await job(call, config, who, target, schedule, prompt);
            return 'refusal' in prepared ? prepared.refusal : undefined;
        },
        proposedWith: (token) => requests.ofToken(tokenDigest(token)),
        propose: async (rec: WriteRequest, token: string) => {
            // The approval is public in the conversation (as a tool approval is), in the server's language.
            const view = writeApprovalView(rec, translator());
            let messageId: string;
            try {
                messageId = await call.chat().post(rec.conversation, view.text, 'command', { buttons: view });
            } catch {
                return false;
            }
            await requests.save({ ...rec, approvalMessageId: messageId, tokenDigest: tokenDigest(token) });
            return true;
        },
        newId: () => randomBytes(8).toString('hex'),
        now: Date.now,
        log: call.log,
    };
}

/** The ports of a click on an approval; `clicker` is who clicked, `where` the room (and thread) they clicked in. */
export async function approveWritePorts(
    call: CallPorts,
    config: HermesConfig,
    clicker: { id: string; language?: string },
    where: { roomId: string; threadId?: string },
): Promise<ApproveWritePorts> {
    const requests = new WriteRequests(call.read.getPersistenceReader(), call.persistence);
    const { siteUrl } = await call.app.serverInfo.get(call.read);
    const write = writePorts(call, config);
    return {
        get: (id) => requests.get(id),
        save: (rec) => requests.save(rec),
        claim: (id) => call.receipts().claimFirst(id),
        target: write.target,
        post: (target, text) => call.chat().post({ roomId: target.roomId, threadId: target.threadId }, text, 'answer'),
        schedule: async (rec, target) => {
            const who = { id: rec.askerId, username: rec.askerUsername };
            const prepared = await job(call, config, who, target, rec.schedule ?? '', rec.text, clicker.language);
            if ('refusal' in prepared) {
                return prepared;
            }
            await call.cron().save(prepared.job);
            call.log.info(`Scheduled prompt ${prepared.job.id} added by ${who.id} for room ${target.roomId} through an MCP request.`);
            return { added: addedText(prepared.job, { config, language: clicker.language }) };
        },
        settle: async (rec, text) => {
            if (rec.approvalMessageId) {
                await call.chat().edit(rec.approvalMessageId, rec.conversation.roomId, text, { kind: 'command' });
            }
        },
        tell: (text) => call.chat().whisper(clicker.id, where, text),
        link: (target, messageId) => (siteUrl ? messageLink(siteUrl, target, messageId) : undefined),
        t: translator(),
        now: Date.now,
        log: call.log,
    };
}
