import { HttpStatusCode } from '@rocket.chat/apps-engine/definition/accessors';
import { IApiResponse } from '@rocket.chat/apps-engine/definition/api';

/** An endpoint's refusal: a status and one word of why, nothing about rooms or people. */
export const refuse = (status: HttpStatusCode, error: string): IApiResponse => ({ status, content: { error } });
