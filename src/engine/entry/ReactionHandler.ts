import { ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IMessage, IMessageReactionContext } from '@rocket.chat/apps-engine/definition/messages';
import { markOf } from '../../delivery/messageKind';
import { takeReaction, voteOf } from '../../feedback/feedback';
import { Gate } from './gate';
import { PlaceOrder } from '../../turns/placeOrder';
import { whyPrompt } from '../../feedback/why';
import { preferenceOf, translator } from '../../i18n/messages';

/**
 * `IPostMessageReacted`: a 👍 or 👎 on one of the bot's answers is a vote (feedback/). The server
 * builds the event, not the client: it fires only after its own `executeSetReaction` checked that
 * the reactor may access the room (apps/meteor/app/reactions/server/setReaction.ts), so the
 * reactor, the message and its room are facts here. Every other reaction (the bot's own 👀 and ✅
 * included, which the server reports too) returns before any read.
 */
export class ReactionHandler {
    /**
     * One person's reactions on one answer, taken one at a time in the order they came: the engine
     * runs events side by side, and a 👍 taken back while the 👎 that replaces it is being stored
     * would otherwise remove the new vote.
     */
    private readonly order = new PlaceOrder();

    constructor(private readonly gate: Gate) {}

    public async handle(context: IMessageReactionContext, read: IRead, persistence: IPersistence, modify: IModify, logger: ILogger): Promise<void> {
        const message = context.message;
        if (!voteOf(context.reaction) || !message?.id || !context.user?.id) {
            return;
        }
        const inLine = this.order.arrive(`${message.id}:${context.user.id}`);
        try {
            await inLine.ready;
            await this.take(context, message as IMessage & { id: string }, { read, persistence, modify, logger });
        } finally {
            inLine.done();
        }
    }

    private async take(
        context: IMessageReactionContext,
        message: IMessage & { id: string },
        { read, persistence, modify, logger }: { read: IRead; persistence: IPersistence; modify: IModify; logger: ILogger },
    ): Promise<void> {
        const call = await this.gate.event({ read, modify, persistence, logger });
        if (!call.bot || !call.config) {
            return;
        }
        const outcome = await takeReaction(
            {
                reaction: context.reaction,
                isReacted: context.isReacted,
                messageId: message.id,
                senderId: message.sender?.id,
                marked: markOf(message.blocks) !== undefined,
                userId: context.user.id,
            },
            {
                botId: call.bot.id,
                feedback: call.feedback(),
                now: Date.now,
                askWhy: call.config.feedbackAskWhy
                    ? async (vote) => {
                          // In the reactor's language, where the answer is: only they see it.
                          const prompt = whyPrompt(vote.answerId, translator(preferenceOf(context.user)));
                          const where = { roomId: vote.roomId, threadId: message.threadId };
                          await call.chat().whisper(vote.userId, where, prompt.text, prompt);
                      }
                    : undefined,
            },
        );
        if (outcome !== 'ignored') {
            call.log.debug(`Vote ${outcome} on answer ${message.id} by user ${context.user.id}.`);
        }
    }
}
