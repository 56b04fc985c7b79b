import { reconcileFileSchedules } from '../../jobs/fileSchedules.js';
import { checkMigrations } from '../../migrations/applyMigrations.js';
import type { PgStore } from '../../store/postgres/pgStore.js';
import { SqliteStore } from '../../store/sqlite/sqliteStore.js';
import type { StoreStack } from '../../store/storeStack.js';
import { openAppStore } from '../appStore.js';
import { serverJobs } from '../features.js';
import type { Base } from './base.js';

export type Stores = StoreStack;

/**
 * The store: opened, wrapped (count cache, measurements), its schema synced to the model, the
 * migrations checked and the config's job schedules reconciled. Closed again if any of that fails.
 */
export async function withStore({ options, config, env, logger, operator, now }: Base): Promise<Stores> {
  // In production the data's place is chosen, never the project folder's default file.
  if (env.NODE_ENV === 'production' && !env.DATABASE_URL && !options.store)
    throw new Error(
      'DATABASE_URL must be set in production: postgres://..., mongodb://... or sqlite:/a/path/app.db (without it the data would go to data/entigen.db in the project folder)',
    );
  const stack = await openAppStore({
    databaseUrl: env.DATABASE_URL,
    root: options.root,
    model: options.registry.model,
    env,
    server: true,
    opened: options.store,
    observe: (kind, operation, outcome, seconds) => operator.storeCall(kind, operation, outcome, seconds),
  });
  const { opened, store, countCache } = stack;
  const schema = await store.init(options.registry.model);
  // Index changes are worth a short line (building one on a large table takes a while); their
  // names, some two hundred on a first start, are for LOG_LEVEL=debug.
  if (schema.added.length > 0) {
    logger.info(`schema sync: added ${schema.added.length} index(es) (LOG_LEVEL=debug names them)`);
    logger.debug({ indexes: schema.added }, 'schema sync: indexes added');
  }
  if (schema.dropped.length > 0) {
    logger.info(
      `schema sync: dropped ${schema.dropped.length} index(es) no longer planned (LOG_LEVEL=debug names them)`,
    );
    logger.debug({ indexes: schema.dropped }, 'schema sync: indexes dropped');
  }
  try {
    await checkMigrations(store, options.root, options.registry.model, now);
    // The features' own jobs (backups.schedule, the trash's purge) are file jobs too, run by the
    // server's own handlers.
    const own = serverJobs(options.registry.model, config).map((job) => job.schedule);
    const jobs = await reconcileFileSchedules(
      store,
      [...(options.registry.model.jobSchedules ?? []), ...own],
      [...Object.keys(options.handlers ?? {}), ...own.map((schedule) => schedule.handler)],
      now(),
    );
    if (jobs.created.length + jobs.updated.length + jobs.released.length > 0)
      logger.info(jobs, 'scheduled jobs of entigen.config.yaml: created, updated, released');
  } catch (error) {
    await store.close();
    throw error;
  }
  if (opened.kind === 'postgres' && 'setting' in opened && (await (opened as PgStore).setting('autovacuum')) === 'off')
    logger.warn(
      "PostgreSQL's autovacuum is off: without the statistics it gathers, the planner takes grown tables for empty and lists and aggregations slow down; turn it on, or run ANALYZE after bulk loads",
    );
  if (opened instanceof SqliteStore) {
    opened.reportWarningsTo((message) => logger.warn(message));
    const commits = () => opened.commitStatistics();
    operator.watch('entigen_group_commits', 'Commits of the embedded store (each one fsync)', () => commits().groups);
    operator.watch('entigen_group_commit_transactions', 'Transactions those commits carried', () => commits().members);
  }
  if (countCache) {
    operator.watch('entigen_read_cache_hits', 'Counts and session callers answered from memory', () => countCache.hits);
    operator.watch(
      'entigen_read_cache_misses',
      'Counts and session callers read from the store',
      () => countCache.misses,
    );
  }
  return stack;
}
