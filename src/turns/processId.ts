import { randomUUID } from 'crypto';

/** This app process: the chat stream of a turn lives in the process that opened it, and so does a fresh claim's decision. */
export const PROCESS_ID = randomUUID();
