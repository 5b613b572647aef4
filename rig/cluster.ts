import { Rig } from './index';

/**
 * Several Rocket.Chat instances on one database, as large deployments run them: one engine
 * and app process each (`Rig.join`), one shared store of messages, persistence and scheduler
 * jobs. A message is posted through the instance a person is connected to, and its event
 * reaches that instance's app only; a job runs on exactly one instance.
 */
export class RigCluster {
    private constructor(public readonly instances: Rig[]) {}

    public static async start(opts: { zipPath: string; settings?: Record<string, unknown>; instances?: number }): Promise<RigCluster> {
        const first = await Rig.start({ zipPath: opts.zipPath, settings: opts.settings });
        const rigs = [first];
        for (let i = 1; i < (opts.instances ?? 2); i++) {
            rigs.push(await Rig.join(first, { zipPath: opts.zipPath, settings: opts.settings }));
        }
        return new RigCluster(rigs);
    }

    /** An admin's setting change reaches every instance (the server broadcasts it). */
    public async setting(id: string, value: unknown): Promise<void> {
        for (const rig of this.live()) {
            await rig.setting(id, value);
        }
    }

    /** Until no instance has a call into its app running and no job is waiting. */
    public async settle(): Promise<void> {
        for (let round = 0; round < 3; round++) {
            for (const rig of this.live()) {
                await rig.settle();
            }
        }
    }

    /**
     * The instance dies at once: its app process is killed mid-call, its scheduler takes no more
     * jobs (the jobs it had not started stay for the others), no more events reach it.
     */
    public kill(index: number): void {
        const rig = this.instances[index];
        this.dead.add(rig);
        rig.server.bridges.scheduler.stopInstance();
        const runtime = rig.server.manager.getOneById(rig.appId).getRuntimeController() as unknown as { deno?: { kill(signal: string): void } };
        runtime.deno?.kill('SIGKILL');
    }

    public async stop(): Promise<void> {
        for (const rig of [...this.instances].reverse()) {
            await rig.stop();
        }
    }

    private readonly dead = new Set<Rig>();

    private live(): Rig[] {
        return this.instances.filter((r) => !this.dead.has(r));
    }
}
