import type { BackupsConfig } from '../config/runtimeConfig.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { JobHandler } from '../jobs/scheduler.js';
import type { JobScheduleModel } from '../model/types.js';
import { postgresTarget } from '../store/openStore.js';
import { backupName, backupPlace, pruneBackups } from './backupTarget.js';
import { takeBackup } from './takeBackup.js';

/** The handler name of the server's own backup job (not one a jobs module can export: it has no such function). */
export const BACKUP_HANDLER = 'entigenBackup';

/** backups.schedule as a scheduled job of the config, reconciled at start like jobs.schedules. */
export function backupSchedule(config: BackupsConfig): JobScheduleModel {
  return {
    name: 'backup',
    handler: BACKUP_HANDLER,
    scheduleType: config.scheduleType,
    schedules: [config.schedule],
    timezone: 'UTC',
    timeout: '6h',
    description: `Backs up the database and the media files to ${config.to}, keeping the newest ${config.keep}`,
    enabled: true,
  };
}

/**
 * The backup job: one instance at a time runs it (the scheduler leases the job), writes the
 * backup, then keeps the newest `keep`. Its execution records what it wrote.
 */
export function backupJob(
  ctx: RuntimeContext,
  config: BackupsConfig,
  root: string,
  env: NodeJS.ProcessEnv,
): JobHandler {
  return async ({ logger }) => {
    const place = backupPlace(config.to, root, env);
    try {
      const name = place.name ?? backupName(ctx.now());
      const manifest = await takeBackup({
        store: ctx.store,
        model: ctx.registry.model,
        media: ctx.media?.storage,
        target: place.storage,
        name,
        postgres: postgresTarget(env.DATABASE_URL),
        logical: config.logical,
        now: ctx.now,
      });
      const removed = await pruneBackups(place.storage, config.keep);
      logger.info({ backup: name, to: place.label, removed }, 'backup written');
      return { backup: name, to: place.label, database: manifest.database, files: manifest.files.length, removed };
    } finally {
      await place.storage.close();
    }
  };
}
