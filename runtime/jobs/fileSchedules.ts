import { createHash } from 'node:crypto';
import { parseDuration } from '../config/runtimeConfig.js';
import { SCHEDULED_JOBS } from '../model/collections.js';
import { nextRunAfter } from '../model/schedule.js';
import type { JobScheduleModel } from '../model/types.js';
import { type Doc, type Store, UniqueConflict } from '../store/types.js';
import { FILE_OWNED_FIELDS } from './jobRules.js';

/** A file job's id: the same on every instance, so instances starting together create it once. */
export function fileJobId(name: string): string {
  return createHash('sha256').update(`entigen:job:${name}`).digest('hex').slice(0, 24);
}

export interface ReconcileOutcome {
  created: string[];
  updated: string[];
  /** Declared no more: disabled, handed to the API, executions kept. */
  released: string[];
}

/**
 * Makes the scheduled jobs match `jobs.schedules` of the config: each declared job is created
 * (origin `file`) or given the file's settings; a job of the same name made through the API is
 * taken over; a file job the config no longer declares is disabled and becomes an API job
 * (its executions stay). A declared handler the handlers module does not export stops the start.
 */
export async function reconcileFileSchedules(
  store: Store,
  schedules: readonly JobScheduleModel[],
  handlers: readonly string[],
  now: Date,
): Promise<ReconcileOutcome> {
  const missing = schedules.filter((job) => !handlers.includes(job.handler));
  if (missing.length > 0) {
    throw new Error(
      `jobs.schedules names handlers that jobs.handlers does not export: ${missing.map((job) => `${job.name} -> ${job.handler}`).join(', ')} (exports: ${handlers.join(', ') || 'none'})`,
    );
  }
  const outcome: ReconcileOutcome = { created: [], updated: [], released: [] };
  const declared = new Set(schedules.map((job) => job.name));
  for (const job of schedules) {
    const settings = settingsOf(job);
    const [existing] = await store.find(SCHEDULED_JOBS, {
      where: { field: 'name', op: 'eq', value: job.name },
      sort: [{ field: 'id', direction: 'asc' }],
      limit: 1,
    });
    if (!existing) {
      if (await createJob(store, job, settings, now)) outcome.created.push(job.name);
      continue;
    }
    const changed = FILE_OWNED_FIELDS.filter(
      (key) => JSON.stringify(existing[key] ?? null) !== JSON.stringify(settings[key] ?? null),
    );
    if (changed.length === 0 && existing.origin === 'file') continue;
    const rescheduled = ['scheduleType', 'schedules', 'timezone'].some((key) => changed.includes(key as never));
    await store.update(SCHEDULED_JOBS, existing.id, {
      ...settings,
      origin: 'file',
      ...(rescheduled || !existing.nextRunAt ? { nextRunAt: nextRun(job, now) } : {}),
      updatedAt: now.toISOString(),
    });
    outcome.updated.push(job.name);
  }
  const owned = await store.find(SCHEDULED_JOBS, { where: { field: 'origin', op: 'eq', value: 'file' } });
  for (const job of owned) {
    if (declared.has(job.name as string)) continue;
    await store.update(SCHEDULED_JOBS, job.id, { origin: 'api', enabled: false, updatedAt: now.toISOString() });
    outcome.released.push(job.name as string);
  }
  return outcome;
}

function settingsOf(job: JobScheduleModel): Record<(typeof FILE_OWNED_FIELDS)[number], unknown> {
  return {
    name: job.name,
    description: job.description ?? null,
    handler: job.handler,
    scheduleType: job.scheduleType,
    schedules: job.schedules,
    timezone: job.timezone,
    timeout: job.timeout ? parseDuration(job.timeout) : 300_000,
    enabled: job.enabled,
  };
}

function nextRun(job: JobScheduleModel, now: Date): string {
  return nextRunAfter(job.scheduleType, job.schedules, job.timezone, now).toISOString();
}

/** false when another instance created it first. */
async function createJob(
  store: Store,
  job: JobScheduleModel,
  settings: Record<string, unknown>,
  now: Date,
): Promise<boolean> {
  const doc: Doc = {
    id: fileJobId(job.name),
    ...settings,
    origin: 'file',
    failureCount: 0,
    nextRunAt: nextRun(job, now),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  try {
    await store.insert(SCHEDULED_JOBS, doc);
    return true;
  } catch (error) {
    if (error instanceof UniqueConflict) return false;
    throw error;
  }
}
