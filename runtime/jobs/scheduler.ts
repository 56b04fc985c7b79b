import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type Caller, SYSTEM_CALLER } from '../context/caller.js';
import { contextInTrace } from '../context/carryTrace.js';
import type { WriteOrigin } from '../context/hookTypes.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { DEFAULT_JOB_TIMEOUT_MS, JOB_EXECUTIONS, SCHEDULED_JOBS } from '../model/collections.js';
import { nextRunAfter, type ScheduleType } from '../model/schedule.js';
import { RowLease } from '../store/rowLease.js';
import type { Doc, Store } from '../store/types.js';
import { type Context, failSpanWith, inSpan, linkTo, type Span } from '../telemetry/tracing.js';
import { newId } from '../write/prepareWrite.js';
import { metricPoints, storeSnapshots } from './snapshots.js';

/** What a handler gets: the job, its execution, an abort signal that fires at the timeout, a logger, typed repositories. */
export interface JobContext<R = unknown> {
  job: Doc;
  execution: Doc;
  /** The runtime itself, as every job runs (a manual run's admin is the execution's triggeredByUserId). */
  caller: Caller;
  signal: AbortSignal;
  logger: Logger;
  repositories: R;
}

export type JobHandler = (ctx: JobContext) => Promise<unknown>;

export interface SchedulerOptions {
  ctx: RuntimeContext;
  handlers: Record<string, JobHandler>;
  /** The typed repositories of a run, whose calls belong to `trace` when it is traced. */
  repositories?: (origin: WriteOrigin, trace?: Context) => unknown;
  maxSeriesPerJob: number;
  /** How often due jobs are looked for. */
  tickMs?: number;
  instanceId?: string;
  /** Told of every finished run (the operator metrics count them). */
  onRunFinished?(handler: string, status: 'completed' | 'failed' | 'cancelled'): void;
}

/** A lease outlives the job's timeout by this much before another instance declares the run dead. */
const LEASE_MARGIN_MS = 5_000;
const DUE_BATCH = 20;

/**
 * Runs due jobs. A due run is claimed by moving the job's nextRunAt with a compare-and-set in
 * the store and taking a lease, so across any number of instances each run happens once.
 */
export class Scheduler {
  readonly instanceId: string;
  private timer?: NodeJS.Timeout;
  private stopping = false;
  private readonly running = new Map<string, { done: Promise<void>; abort: (reason: string) => void }>();
  /** A job's row is leased by the instance running its due run, for the job's timeout and a margin. */
  private readonly lease: RowLease;

  constructor(private readonly options: SchedulerOptions) {
    this.instanceId = options.instanceId ?? randomUUID();
    this.lease = new RowLease(options.ctx.store, SCHEDULED_JOBS, this.instanceId, LEASE_MARGIN_MS, () =>
      options.ctx.now(),
    );
  }

  start(): void {
    this.timer = setInterval(() => {
      this.tick().catch((error) => this.options.ctx.logger.warn({ err: error }, 'scheduler tick failed'));
    }, this.options.tickMs ?? 1000);
    this.timer.unref();
  }

  /** One pass: claim and start every due enabled job, and fail runs whose instance died. */
  async tick(): Promise<void> {
    if (this.stopping) return;
    const { store } = this.options.ctx;
    const now = this.options.ctx.now();
    const due = await store.find(SCHEDULED_JOBS, {
      where: {
        and: [
          { field: 'enabled', op: 'eq', value: true },
          { field: 'nextRunAt', op: 'lte', value: now.toISOString() },
        ],
      },
      sort: [{ field: 'nextRunAt', direction: 'asc' }],
      limit: DUE_BATCH,
    });
    for (const job of due) {
      const claimed = await this.claim(job, now);
      // Awaited until the run is registered, so stop() and idle() always see it.
      if (claimed) await this.launch(claimed, 'scheduler');
    }
    await this.failDeadRuns(now);
  }

  /** POST /scheduledJobs/{id}/run: starts a run now and returns its execution. */
  async runNow(job: Doc, userId: string, requestTrace?: Context): Promise<Doc> {
    return this.launch(job, 'manual', userId, requestTrace);
  }

  /** Stops looking for work; lets running jobs finish until the grace period, then cancels them. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    const all = Promise.all([...this.running.values()].map((run) => run.done));
    const timeout = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), graceMs).unref());
    if ((await Promise.race([all.then(() => 'done' as const), timeout])) === 'late') {
      for (const run of this.running.values()) run.abort('The server shut down before the job finished');
      await all;
    }
    await this.lease.releaseAll();
  }

  /** Settles when every run this instance started has ended (tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.running.values()].map((run) => run.done));
  }

  /** A due run is this instance's when it moves nextRunAt from the value it read (compare-and-set) and leases the row. */
  private async claim(job: Doc, now: Date): Promise<Doc | null> {
    const next = nextRunAfter(
      job.scheduleType as ScheduleType,
      job.schedules as string[],
      (job.timezone as string) ?? 'UTC',
      now,
    );
    return this.lease.claim(
      job.id,
      Number(job.timeout ?? DEFAULT_JOB_TIMEOUT_MS) + LEASE_MARGIN_MS,
      {
        and: [
          { field: 'nextRunAt', op: 'eq', value: job.nextRunAt },
          { field: 'enabled', op: 'eq', value: true },
        ],
      },
      { nextRunAt: next.toISOString() },
    );
  }

  private async launch(
    job: Doc,
    triggeredBy: 'scheduler' | 'manual',
    userId?: string,
    requestTrace?: Context,
  ): Promise<Doc> {
    const { store } = this.options.ctx;
    const startedAt = this.options.ctx.now();
    const stamp = startedAt.toISOString();
    const execution = await store.insert(JOB_EXECUTIONS, {
      id: newId(),
      jobId: job.id,
      jobName: job.name,
      handler: job.handler,
      status: 'running',
      startedAt: stamp,
      triggeredBy,
      triggeredByUserId: userId ?? null,
      createdAt: stamp,
      updatedAt: stamp,
    });
    await store.update(SCHEDULED_JOBS, job.id, { lastStatus: 'running', updatedAt: stamp });
    const controller = new AbortController();
    let abort!: (reason: string) => void;
    const aborted = new Promise<never>((_resolve, reject) => {
      abort = (reason) => {
        controller.abort(new Error(reason));
        reject(new CancelledRun(reason));
      };
    });
    aborted.catch(() => undefined);
    // A run is a trace of its own; a manual one links to the administrator's request that started it.
    const done = inSpan(
      `job ${job.name}`,
      {
        root: true,
        links: linkTo(requestTrace),
        attributes: {
          'entigen.job.name': job.name as string,
          'entigen.job.handler': job.handler as string,
          'entigen.job.execution_id': execution.id,
          'entigen.job.trigger': triggeredBy,
        },
      },
      (span, trace) => this.execute(job, execution, controller.signal, aborted, abort, startedAt, span, trace),
    ).finally(() => this.running.delete(execution.id));
    this.running.set(execution.id, { done, abort });
    return execution;
  }

  private async execute(
    job: Doc,
    execution: Doc,
    signal: AbortSignal,
    aborted: Promise<never>,
    abort: (reason: string) => void,
    startedAt: Date,
    span?: Span,
    trace?: Context,
  ): Promise<void> {
    const ctx = contextInTrace(this.options.ctx, trace);
    const timeoutMs = Number(job.timeout ?? DEFAULT_JOB_TIMEOUT_MS);
    const timer = setTimeout(() => abort(`Timed out after ${timeoutMs} ms`), timeoutMs);
    const logger = ctx.logger.child({ job: job.name, executionId: execution.id });
    let status: 'completed' | 'failed' | 'cancelled' = 'completed';
    let output: string | null = null;
    let error: string | null = null;
    try {
      const handler = this.options.handlers[job.handler as string];
      if (!handler)
        throw new Error(
          `No handler named "${job.handler}" is registered (jobs.handlers exports: ${Object.keys(this.options.handlers).join(', ') || 'none'})`,
        );
      const result = await Promise.race([
        handler({
          job,
          execution,
          caller: SYSTEM_CALLER,
          signal,
          logger,
          repositories: this.options.repositories?.(`job:${job.handler}`, trace),
        }),
        aborted,
      ]);
      output = result === undefined ? null : typeof result === 'string' ? result : JSON.stringify(result);
      const points = metricPoints(result);
      if (points) await storeSnapshots(ctx.store, job, execution.id, points, ctx.now(), this.options.maxSeriesPerJob);
    } catch (caught) {
      status = caught instanceof CancelledRun ? 'cancelled' : 'failed';
      error = (caught as Error)?.message ?? String(caught);
      logger.warn({ err: caught }, `job ${status}`);
    } finally {
      clearTimeout(timer);
    }
    if (span && error !== null) failSpanWith(span, error);
    await this.finish(ctx.store, job, execution, startedAt, status, output, error);
    // Only registered handler names become labels: a job naming anything else counts as unknown.
    this.options.onRunFinished?.(
      (job.handler as string) in this.options.handlers ? (job.handler as string) : 'unknown',
      status,
    );
  }

  private async finish(
    store: Store,
    job: Doc,
    execution: Doc,
    startedAt: Date,
    status: 'completed' | 'failed' | 'cancelled',
    output: string | null,
    error: string | null,
  ) {
    const ended = this.options.ctx.now();
    const duration = ended.getTime() - startedAt.getTime();
    // A run already marked failed (its lease ran out while this instance stalled) stays so.
    await store.update(
      JOB_EXECUTIONS,
      execution.id,
      { status, completedAt: ended.toISOString(), duration, output, error, updatedAt: ended.toISOString() },
      { field: 'status', op: 'eq', value: 'running' },
    );
    const summary = { lastRunAt: startedAt.toISOString(), lastStatus: status, updatedAt: ended.toISOString() };
    if (status === 'completed')
      await store.update(SCHEDULED_JOBS, job.id, { ...summary, failureCount: 0, lastError: null });
    else await store.increment(SCHEDULED_JOBS, job.id, { failureCount: 1 }, { ...summary, lastError: error });
    // Only this instance's lease: a later run claimed elsewhere keeps its own.
    await this.lease.release(job.id);
  }

  /** Runs whose lease ran out belong to an instance that died: they are marked failed. */
  private async failDeadRuns(now: Date): Promise<void> {
    const { store } = this.options.ctx;
    const expired = await store.find(SCHEDULED_JOBS, {
      where: { field: 'leaseUntil', op: 'lt', value: now.toISOString() },
      limit: DUE_BATCH,
    });
    for (const job of expired) {
      const released = await store.update(
        SCHEDULED_JOBS,
        job.id,
        { leaseOwner: null, leaseUntil: null },
        { field: 'leaseUntil', op: 'eq', value: job.leaseUntil },
      );
      if (!released) continue;
      const stale = await store.find(JOB_EXECUTIONS, {
        where: {
          and: [
            { field: 'jobId', op: 'eq', value: job.id },
            { field: 'status', op: 'eq', value: 'running' },
          ],
        },
      });
      for (const execution of stale) {
        if (this.running.has(execution.id)) continue;
        const error = 'The instance running this job stopped before it finished (lease expired)';
        await store.update(JOB_EXECUTIONS, execution.id, {
          status: 'failed',
          error,
          completedAt: now.toISOString(),
          updatedAt: now.toISOString(),
        });
        await store.increment(SCHEDULED_JOBS, job.id, { failureCount: 1 }, { lastStatus: 'failed', lastError: error });
      }
    }
  }
}

class CancelledRun extends Error {}
