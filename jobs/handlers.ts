// Job handlers of the example app, named by `jobs.handlers` in entigen.config.yaml.
// A ScheduledJob's `handler` field picks one of these exports by name.
import type { JobContext } from 'entigen/runtime';
import type { Repositories } from '../generated/index.js';

/** Does nothing but prove the scheduler runs; its output is the time it ran. */
export async function heartbeat({ job }: JobContext): Promise<string> {
  return `${job.name} ran at ${new Date().toISOString()}`;
}

/** Counts articles by status and returns them as metric points, stored as job snapshots. */
export async function articleStats({ repositories, signal }: JobContext<Repositories>) {
  const metrics = [];
  for (const status of ['draft', 'published', 'archived'] as const) {
    if (signal.aborted) throw new Error('cancelled');
    metrics.push({ name: 'articles', value: await repositories.articles.count({ status }), dimensions: { status } });
  }
  return { metrics };
}
