import { IConfigurationModify, IEnvironmentRead, IHttp, ILogger, IModify, IPersistence, IRead } from '@rocket.chat/apps-engine/definition/accessors';
import { IJobContext, IProcessor } from '@rocket.chat/apps-engine/definition/scheduler';
import { readSettings } from '../adapters/readSettings';
import { AppState } from '../appState';
import { reportConfig } from '../../settings/reportConfig';
import { jobLogger } from './jobLogger';

/** The settings report job: waits for a batch of changes to end (each change pushes it back). */
const SETTINGS_REPORT_JOB = 'hermes-settings-report';
const SETTINGS_QUIET_MS = 1_000;

/**
 * An admin saving the form changes many settings, one `onSettingUpdated` call each. Each call
 * applies the settings at once, silently; the report — one "settings applied" line, the
 * warnings, one Hermes probe — comes from this job once the changes have stopped for a moment.
 */
export async function settingsChanged(state: AppState, configurationModify: IConfigurationModify, read: IRead, logger: ILogger): Promise<void> {
    state.config.apply(await readSettings(read.getEnvironmentReader().getSettings()));
    state.log(logger).setSecrets(state.secrets());
    try {
        await configurationModify.scheduler.cancelJob(SETTINGS_REPORT_JOB);
        await configurationModify.scheduler.scheduleOnce({ id: SETTINGS_REPORT_JOB, when: new Date(Date.now() + SETTINGS_QUIET_MS) });
    } catch {
        // No scheduler here: report now rather than never.
        await reportSettings(state, read.getEnvironmentReader(), logger);
    }
}

export function settingsReportProcessor(state: AppState, appLogger: () => ILogger): IProcessor {
    return {
        id: SETTINGS_REPORT_JOB,
        processor: async function (this: unknown, _job: IJobContext, read: IRead, _modify: IModify, _http: IHttp, _persis: IPersistence) {
            await reportSettings(state, read.getEnvironmentReader(), jobLogger(this, appLogger));
        },
    };
}

/** Parses the settings, reports them, and probes what the configured Hermes offers. */
export async function reportSettings(state: AppState, environment: IEnvironmentRead, logger: ILogger): Promise<void> {
    const log = state.log(logger);
    const update = state.config.apply(await readSettings(environment.getSettings()));
    log.setSecrets(state.secrets());
    reportConfig(update, log);
    const config = state.config.get();
    if (update.kind !== 'applied' || !config) {
        return;
    }
    try {
        const caps = await state.capabilities.refresh(state.hermes(config), `${config.hermesUrl}#${config.hermesTransport}`);
        log.info(
            `Hermes ${caps.version ?? '(version unknown)'} reachable; ${caps.runs ? `runs offered${caps.runsLoadHistory ? ' (history loaded by Hermes)' : ' (history sent by the app)'}` : 'no runs: chat completions only'}; transport setting ${config.hermesTransport}.`,
        );
    } catch (error) {
        state.capabilities.forget();
        log.warn(`Hermes could not be probed (${error instanceof Error ? error.message : String(error)}); the first turn will try again.`);
    }
}
