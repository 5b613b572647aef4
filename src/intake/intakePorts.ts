/* What the intake of a message (takeMessage.ts) reads and writes through: the turn's start's ports, and the commands'. */

import { CommandPorts } from '../commands/commandPorts';
import { HermesClient } from '../hermes/client';
import { SessionIndexPort } from '../sessions/sessionIndex';
import { HermesConfig } from '../settings/config';
import { StartPorts } from '../turns/startPorts';

export interface IntakePorts extends StartPorts {
    /** Scheduled prompts and the settings writer, for the commands that use them. */
    commandExtras?: Pick<CommandPorts, 'cron' | 'updateSetting' | 'feedback' | 'exchange' | 'background'>;
    /** Who owns which session (for the session commands). */
    index?: SessionIndexPort;
    /** In a thread: stops following it (`unfollow`). */
    unfollow?: () => Promise<boolean>;
}

/** The intake's ports once the app has a configuration and a Hermes client. */
export type IntakeReady = IntakePorts & { config: HermesConfig; hermes: HermesClient };
