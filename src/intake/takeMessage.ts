/* The intake of a message to the bot: refused, answered in place, or queued as a turn. */

import { answerCommand, answerDecision, replyInPlace } from './answerInPlace';
import { IntakePorts } from './intakePorts';
import { textDecision } from '../approvals/approvalPolicy';
import { parseTextCommand } from '../admission/textCommand';
import { t } from '../i18n/messages';
import { Admitted, describeRefusal, Refusal, roomRules } from '../admission/turnAdmission';
import { askOf, describeTurn, Turn, turnSessionKey } from '../turns/turn';
import { admittedFor, NOT_ADMITTED, Reply, StartOutcome } from '../turns/startPorts';
import { queueTurn } from '../turns/startTurn';

/**
 * What a message to the bot becomes, quickly: a decision on a pending approval or a command,
 * answered in place, or a question, handed to the turn machine (turns/startTurn.ts), which reads
 * the room and persists the turn for the scheduler to carry. The event handler returns right
 * after; no answer depends on it staying alive.
 */
export async function takeMessage(turn: Turn, ports: IntakePorts): Promise<StartOutcome> {
    const reply: Reply = (text, kind) => replyInPlace(turn, ports, text, kind);
    // The rules every turn follows (turnAdmission.ts) that need no read; the budget is read in `queue`.
    const rules = ports.config ? roomRules(askOf(turn), ports.config) : undefined;
    // Only a question headed for Hermes reads ahead of the admission (its session and context);
    // a command, a decision or a refusal waits for it.
    const question = ports.config && ports.hermes && rules?.admit && !textDecision(turn.text) && !parseTextCommand(turn.text);
    if (!question && !(await admittedFor(ports))) {
        return NOT_ADMITTED;
    }
    const queued = await queueOrAnswer(turn, rules, ports, reply);
    if (queued.kind !== 'queued' && queued !== NOT_ADMITTED) {
        await ports.claim();
    }
    return queued;
}

async function queueOrAnswer(turn: Turn, rules: Admitted | Refusal | undefined, ports: IntakePorts, reply: Reply): Promise<StartOutcome> {
    if (!ports.config || !ports.hermes || !rules) {
        ports.log.warn(`Turn for ${describeTurn(turn)} refused: the app has no valid configuration (see the settings errors above).`);
        await reply(t('notice_not-configured'), 'notice');
        return { kind: 'refused', reason: 'not-configured' };
    }
    if (!rules.admit && rules.reason === 'room-policy') {
        ports.log.warn(
            `Turn for ${describeTurn(turn)} refused: the room's entry in room_policies is malformed (see the line reported when the settings were applied).`,
        );
        await reply(t('notice_room-policy'), 'notice');
        return { kind: 'refused', reason: 'room-policy' };
    }
    if (!rules.admit) {
        // The event turns these away before a turn (the allowlist silently; an `off` or automation
        // room with its own once-only notice): a turn that still gets here is refused without a word.
        ports.log.info(`Turn for ${describeTurn(turn)} refused: ${describeRefusal(rules)}.`);
        return { kind: 'refused', reason: rules.reason };
    }
    const ready = { ...ports, config: ports.config, hermes: ports.hermes };
    const key = turnSessionKey(turn, ready.config);
    return (await answerDecision(turn, key, ready)) ?? (await answerCommand(turn, key, ready, reply)) ?? queueTurn(turn, key, rules, ready, reply);
}
