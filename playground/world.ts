/**
 * The people and rooms of the playground's Rocket.Chat: alice, bob and an admin, a channel, a
 * private group, and a DM with the bot for each person, with a little history to catch up on.
 */
import type { Rig, StoredRoom, StoredUser } from '../rig';

export interface World {
    people: StoredUser[];
    rooms: StoredRoom[];
}

export async function buildWorld(rig: Rig): Promise<World> {
    const alice = rig.user('alice', { name: 'Alice Example' });
    const bob = rig.user('bob', { name: 'Bob Example' });
    const admin = rig.admin;
    const general = rig.room('general', [alice, bob, admin, rig.bot]);
    const ops = rig.room('ops', [alice, admin, rig.bot], 'p');
    const dms = [alice, bob, admin].map((person) => rig.direct([person, rig.bot]));
    // History laid down without events: the bot does not answer it, "Catch me up" and "Summarize" have something to read.
    const hour = 3600_000;
    const root = await rig.post(bob, general, 'Morning! The release is planned for Friday 15:00.', {
        silent: true,
        createdAt: new Date(Date.now() - 2 * hour),
    });
    await rig.post(alice, general, 'The staging deploy failed on step 3, I am looking into it.', {
        silent: true,
        tmid: root.id,
        createdAt: new Date(Date.now() - hour),
    });
    await rig.post(admin, ops, 'Reminder: the database maintenance window is tonight.', { silent: true, createdAt: new Date(Date.now() - hour / 2) });
    return { people: [alice, bob, admin], rooms: [general, ops, ...dms] };
}
