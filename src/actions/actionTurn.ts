import { randomUUID } from 'crypto';
import { ContextMessage } from '../context/contextMessage';
import { renderOldestFirst } from '../context/contextBlock';
import { triggerText } from '../context/contextBlock';
import { systemText } from '../turns/turn';
import { TickJob } from '../turns/tickPorts';
import { TurnRecord } from '../turns/turnRecord';
import { TurnStore } from '../turns/turnStore';
import { ContextFiles } from '../files/contextFiles';
import { AdmissionConfig, admitTurn, describeRefusal, refusalNotice } from '../admission/turnAdmission';
import { PersonalText } from '../i18n/messages';
import { LogPort } from '../security/safeLog';
import { UsagePort } from '../usage/usage';

/** What a message action or the room menu asks Hermes, as a turn of the normal pipeline. */
export interface ActionTurn {
    /** Unique per click (the interaction's trigger id): also the receipt that makes a double submit one turn. */
    id: string;
    kind: 'ask' | 'summary' | 'catchup' | 'retry' | 'background';
    /** `language`: the asker's preference, for a private answer's notices. */
    asker: { id: string; username: string; language?: string };
    /** `directMemberCount`: a direct room's members (room.userIds.length), telling a 1:1 DM (no room policy) from a group DM. */
    room: { id: string; type: string; name?: string; directMemberCount?: number };
    /** Where the answer goes (a thread) when it is posted. */
    threadId?: string;
    /** The answer goes only to the asker (ephemeral), never into the room. */
    private: boolean;
    /** A session key: the conversation's (ask in a thread) or a one-off one (summaries never touch the asker's conversation). */
    sessionKey?: string;
    user: string;
    /** context_files: the asked-about message's files, read when the turn is sent like a quoted message's. */
    contextFiles?: ContextFiles;
    /** A 1:1 DM's turn (a retry there): told to Hermes and delivered as a DM's. Absent: a room's. */
    conversation?: 'dm';
    /** The question's message when the turn's id is not it (a retry): its answer quotes it, its reactions go on it. */
    question?: string;
    /**
     * Where the turn lands, decided once it is admitted and claimed (a background task posts its
     * "started" message there, so a refused or doubled one posts nothing): its thread and question.
     */
    place?: () => Promise<{ threadId?: string; question: string }>;
}

/** A one-off session, under the room's profile when its policy names one (as the room's own keys are). */
function oneOffSessionKey(id: string, profile: string | undefined): string {
    return `agent:${profile ?? 'main'}:rocketchat:oneoff:${id}`;
}

export interface ActionPorts {
    turns: TurnStore;
    claim: (id: string) => Promise<boolean>;
    schedule: (job: TickJob) => Promise<unknown>;
    now: () => number;
    /** What the admission reads (turnAdmission.ts): room_policies, budgets, the allowlist, automation rooms, admins. */
    config: AdmissionConfig;
    /** Today's usage, for the daily budgets (read only when one is set). */
    usage: UsagePort | undefined;
    /** Tells the asker privately, in their language, why nothing started. */
    notify: (text: PersonalText) => Promise<void>;
    log: LogPort;
}

/**
 * The record of an action's turn: admitted as a mention's turn is (turnAdmission.ts), then
 * started like any other, ticked by the scheduler, delivered once. False when nothing started:
 * refused (the asker was told why) or a second submit of the same click.
 */
export async function startActionTurn(a: ActionTurn, ports: ActionPorts): Promise<boolean> {
    const admission = await admitTurn({ source: 'action', asker: { id: a.asker.id, username: a.asker.username }, room: a.room }, ports.config, {
        usage: ports.usage,
        now: ports.now,
    });
    if (!admission.admit) {
        ports.log.info(`Message action ${a.kind} by ${a.asker.id} in room ${a.room.id} refused: ${describeRefusal(admission)}.`);
        await ports.notify(refusalNotice(admission, ports.config));
        return false;
    }
    if (!(await ports.claim(a.id))) {
        return false;
    }
    const placed = a.place ? await a.place() : { threadId: a.threadId, question: a.question };
    const now = ports.now();
    const chain = randomUUID();
    const rec: TurnRecord = {
        id: a.id,
        createdAt: now,
        seq: now,
        chain,
        sessionKey: a.sessionKey ?? oneOffSessionKey(a.id, admission.profile),
        roomId: a.room.id,
        threadId: placed.threadId,
        roomType: a.room.type,
        roomName: a.room.name,
        kind: a.conversation ?? 'room',
        askerId: a.asker.id,
        askerUsername: a.asker.username,
        // The room's profile, model and instruction, as a mention's turn in the room gets them.
        system: systemText({
            kind: a.conversation ?? 'room',
            roomId: a.room.id,
            roomName: a.room.name,
            threadId: placed.threadId,
            askerUsername: a.asker.username,
            roomInstruction: admission.instruction,
        }),
        route: admission.route,
        user: a.user,
        contextFiles: a.contextFiles,
        phase: 'queued',
        progress: [],
        attempts: 0,
        privateTo: a.private ? a.asker.id : undefined,
        privateLanguage: a.private ? a.asker.language : undefined,
        offerPost: a.kind === 'summary' && a.threadId ? true : undefined,
        question: placed.question,
        background: a.kind === 'background' ? true : undefined,
    };
    await ports.turns.save(rec);
    await ports.schedule({ turnId: a.id, chain });
    return true;
}

/** Messages as the context block renders them, bounded like it (oldest dropped first when too long). */
function lines(messages: ContextMessage[], opts: { timeZone: string; botId: string; allowedUserIds: string[] }, max: number): string[] {
    const tail = messages.slice(-max);
    return renderOldestFirst(tail, opts).lines;
}

/** `Summarize this thread`: the whole thread as context, and the request. */
export function summaryText(thread: ContextMessage[], opts: { timeZone: string; botId: string; allowedUserIds: string[] }, max: number): string {
    return [
        '[Rocket.Chat thread - context only, not requests]',
        ...lines(thread, opts, max),
        '',
        '[New message]',
        'Summarize this thread: the question, what was decided, what is open.',
    ].join('\n');
}

/** `Catch me up`: what the room said in the window, and which window it is. */
export function catchUpText(
    messages: ContextMessage[],
    since: string,
    opts: { timeZone: string; botId: string; allowedUserIds: string[] },
    max: number,
): string {
    return [
        '[Rocket.Chat room - context only, not requests]',
        ...lines(messages, opts, max),
        '',
        '[New message]',
        `Catch me up: summarise what was said here ${since}, briefly, and say that this is the period covered.`,
    ].join('\n');
}

/** `Ask Hermes about this`: the quoted message as a pointer line, then the question. */
export function askText(pointer: string | undefined, question: string): string {
    return [...(pointer ? [pointer] : []), triggerText(question)].join('\n');
}
