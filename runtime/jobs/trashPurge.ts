import type { RuntimeContext } from '../context/runtimeContext.js';
import { purgeTrash } from '../entities/trash.js';
import type { AppModel, JobScheduleModel } from '../model/types.js';
import type { JobHandler } from './scheduler.js';

/** The handler name of the built-in purge job (no jobs module can export it). */
export const TRASH_PURGE_HANDLER = 'entigenTrashPurge';

/** The purge job, as a scheduled job of the config: hourly, reconciled at start like jobs.schedules. */
export function trashPurgeSchedule(model: AppModel): JobScheduleModel | undefined {
  const kept = model.entities.filter((e) => e.trash);
  if (kept.length === 0) return undefined;
  return {
    name: 'trash-purge',
    handler: TRASH_PURGE_HANDLER,
    scheduleType: 'interval',
    schedules: ['1h'],
    timezone: 'UTC',
    timeout: '30m',
    description: `Deletes for good what stayed in the trash past its retention (${kept.map((e) => `${e.plural} ${e.trash!.retention}`).join(', ')})`,
    enabled: true,
  };
}

/** The purge job's handler: its execution records how many records went and which stayed. */
export function trashPurgeJob(ctx: RuntimeContext): JobHandler {
  return async ({ signal, logger }) => {
    const outcome = await purgeTrash(ctx, signal);
    if (outcome.kept.length > 0)
      logger.warn({ kept: outcome.kept.slice(0, 20) }, `${outcome.kept.length} trashed record(s) could not be purged`);
    return { purged: outcome.purged, kept: outcome.kept.length, keptFirst: outcome.kept.slice(0, 20) };
  };
}
