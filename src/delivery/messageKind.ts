/**
 * What the app marks on each message it posts (customFields.hermes), so it can later tell its
 * answers from its notices and progress messages when it reads a room's history.
 */
export type BotMessageKind = 'answer' | 'notice' | 'status' | 'command';

export const KIND_FIELD = 'hermes';

export function kindOf(customFields: Record<string, unknown> | undefined): BotMessageKind | undefined {
    const value = customFields?.[KIND_FIELD];
    return value === 'answer' || value === 'notice' || value === 'status' || value === 'command' ? value : undefined;
}
