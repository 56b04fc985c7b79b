import { sweepIdempotencyRecords } from '../../http/idempotency.js';
import { Scheduler } from '../../jobs/scheduler.js';
import { lastEventSeq, pruneEvents } from '../../write/eventLog.js';
import { serverJobs } from '../features.js';
import type { Base } from './base.js';
import type { EventConsumers } from './events.js';
import type { Services } from './services.js';

const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

export interface Upkeep {
  scheduler: Scheduler;
  /** Prunes the event log now (it also runs hourly): by age and count, never what a consumer still needs. */
  pruneLog(): Promise<number>;
  sweeper: NodeJS.Timeout;
}

/** The job scheduler and the hourly sweep (idempotency records, the event log). */
export function withUpkeep(
  { options, env, config, logger, operator }: Base,
  { ctx, systemRepositories }: Services,
  { works }: EventConsumers,
): Upkeep {
  const scheduler = new Scheduler({
    ctx,
    handlers: {
      ...options.handlers,
      ...Object.fromEntries(
        serverJobs(options.registry.model, config).map((job) => [
          job.schedule.handler,
          job.handler({ ctx, config, root: options.root, env }),
        ]),
      ),
    },
    repositories: systemRepositories,
    maxSeriesPerJob: config.jobs.maxSeriesPerJob,
    onRunFinished: (handler, status) => operator.jobRun(handler, status),
  });
  /** The log keeps what afterCommit hooks and enabled webhooks have not settled, whatever its age. */
  const pruneLog = async () => {
    const before = new Date(ctx.now().getTime() - config.events.retentionMs);
    const delivered = await works.deliveredUpTo(await lastEventSeq(ctx.store));
    return pruneEvents(ctx.store, before, delivered, config.events.maxCount);
  };
  const sweeper = setInterval(() => {
    sweepIdempotencyRecords(ctx.store, ctx.now().getTime()).catch((error) =>
      logger.warn({ err: error }, 'idempotency sweep failed'),
    );
    pruneLog().catch((error) => logger.warn({ err: error }, 'event log prune failed'));
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  if (options.schedule !== false && env.ENTIGEN_SCHEDULER !== 'off') scheduler.start();
  return { scheduler, pruneLog, sweeper };
}
