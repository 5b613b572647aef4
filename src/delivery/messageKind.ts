/**
 * What the app marks on each message it posts (customFields.hermes), so it can later tell its
 * answers from its notices and progress messages when it reads a room's history.
 */
export type BotMessageKind = 'answer' | 'notice' | 'status' | 'command' | 'approval';

export const KIND_FIELD = 'hermes';
/** customFields key holding the id of the turn a message belongs to. */
export const TURN_FIELD = 'hermesTurn';

export function kindOf(customFields: Record<string, unknown> | undefined): BotMessageKind | undefined {
    const value = customFields?.[KIND_FIELD];
    return value === 'answer' || value === 'notice' || value === 'status' || value === 'command' || value === 'approval' ? value : undefined;
}
