import { IUIKitInteraction } from '@rocket.chat/apps-engine/definition/uikit';
import { IUser } from '@rocket.chat/apps-engine/definition/users';
import { UiInteractionBridge } from '@rocket.chat/apps-engine/server/bridges';
import type { RigServer } from '../server';
import { overJson } from '../uiClient';

/**
 * apps/meteor/app/apps/server/bridges/uiInteraction.ts: the app must exist, then the
 * interaction is broadcast to the user's `notify-user/<uid>/uiInteraction` stream as it is;
 * the server checks neither the user nor the triggerId (the client does, see UiClient).
 * The engine's doNotifyUser drops the call silently without `ui.interact`.
 */
export class RigUiInteractionBridge extends UiInteractionBridge {
    /** Every interaction sent, in order, with the user it went to. */
    public readonly interactions: Array<{ userId: string; interaction: IUIKitInteraction }> = [];

    constructor(private readonly rig: RigServer) {
        super();
    }

    protected async notifyUser(user: IUser, interaction: IUIKitInteraction, appId: string): Promise<void> {
        this.rig.calls.record('write', 'ui.notifyUser');
        if (!this.rig.manager.getOneById(appId)) {
            throw new Error('Invalid app provided');
        }
        // api.broadcast('notify.uiInteraction', user.id, interaction): a missing user fails on user.id.
        const userId = user.id;
        const sent = overJson(interaction);
        this.interactions.push({ userId, interaction: sent });
        this.rig.uiClient(userId).receive(sent as unknown as Record<string, unknown>, 'notify');
    }
}
