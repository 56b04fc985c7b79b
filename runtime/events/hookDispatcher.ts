import { randomUUID } from 'node:crypto';
import type { Caller } from '../context/caller.js';
import type { EntityHooks, WriteOrigin } from '../context/hookTypes.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { EVENT_CURSORS, HOOK_DELIVERIES } from '../model/collections.js';
import { LeaseLost, RowLease } from '../store/rowLease.js';
import { type Context, continueTrace, SpanKind } from '../telemetry/tracing.js';
import { type ChangeEvent, eventAt, eventsAfter, lastEventSeq } from '../write/eventLog.js';
import { newId } from '../write/prepareWrite.js';

export interface DispatcherOptions {
  /** Attempts of a failing afterCommit before its delivery is `failed`. */
  attempts: number;
  /** Delay before the first retry; it doubles with each attempt. */
  backoffMs: number;
  /** A hook that runs longer fails this attempt. */
  timeoutMs: number;
  /** How often the log is read when nothing told the dispatcher of a commit (other instances, restarts). */
  pollMs?: number;
  /** How long an instance holds the cursor without renewing it. */
  leaseMs?: number;
  /** Repositories for afterCommit hooks (each write its own transaction, hooks included). */
  repositories?: (origin: WriteOrigin, trace?: Context) => unknown;
  /** Who made a change, as a Caller as they are now (the event keeps only the user's id). */
  callerOf?: (userId: string | undefined) => Promise<Caller>;
}

/** No user: an anonymous write, or the system's own (jobs, hooks' repositories, scripts). */
const NOBODY: Caller = Object.freeze({ roles: [], permissions: new Set<string>(), isAdmin: false });

/** The one cursor of afterCommit delivery (a fixed id: every instance contends for the same row). */
const CURSOR_ID = '000000000000000000000002';
const BATCH = 100;
/** How long a commit's notice waits for others before the log is read. */
const COALESCE_MS = 20;

/**
 * Delivers afterCommit hooks from the event log, at least once, in log order. One instance at a
 * time holds the cursor (a lease in eventCursors); the cursor moves past an event only after its
 * hook finished or its failure was recorded in hookDeliveries, so a crash delivers it again. Failed
 * deliveries are retried with doubling delays, then left `failed` for an admin to set `pending`.
 */
export class HookDispatcher {
  private readonly lease: RowLease;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private soon?: NodeJS.Timeout;
  private stopped = false;
  /** A hooked entity was written since the last poll (see notify). */
  private hookedWritten = false;
  private passes: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: RuntimeContext,
    private readonly options: DispatcherOptions,
  ) {
    this.lease = new RowLease(ctx.store, EVENT_CURSORS, randomUUID(), options.leaseMs ?? 30_000, ctx.now);
  }

  /** Makes sure the cursor exists (new logs start at their end) and polls. */
  async start(): Promise<void> {
    if (!(await this.ctx.store.get(EVENT_CURSORS, CURSOR_ID))) {
      try {
        await this.ctx.store.insert(EVENT_CURSORS, {
          id: CURSOR_ID,
          name: 'afterCommit',
          position: await lastEventSeq(this.ctx.store),
          leaseOwner: null,
          leaseUntil: null,
        });
      } catch {
        // Another instance created it first.
      }
    }
    // Without afterCommit hooks nothing is delivered: a hook added later starts from here, not from old events.
    if (!this.hasAfterCommit()) {
      await this.lease.whenFree(CURSOR_ID, { position: await lastEventSeq(this.ctx.store) });
    }
    const poll = this.options.pollMs ?? 1000;
    this.timer = setInterval(() => {
      this.hookedWritten = false;
      this.notify();
    }, poll);
    this.timer.unref();
    this.notify();
  }

  /**
   * Something committed (to `entity`, when the writer knows): read the log soon (runs coalesce).
   * A commit to an entity without an afterCommit hook waits for the poll, which moves the cursor
   * past it without reading it, unless a hooked entity was written since the last poll: a hook's
   * write inside another entity's transaction tells before that transaction commits.
   */
  notify(entity?: string): void {
    if (this.stopped || !this.hasAfterCommit()) return;
    if (entity !== undefined) {
      if (this.hooksOf(entity)?.afterCommit) this.hookedWritten = true;
      else if (!this.hookedWritten) return;
    }
    if (this.running || this.soon) {
      this.again = this.again || Boolean(this.running);
      return;
    }
    // A short pause gathers the commits of a busy moment into one read of the log.
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.running = this.run().finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.notify();
        }
      });
    }, COALESCE_MS);
  }

  /** Stops polling, waits for the delivery in progress and lets the cursor go, so another instance goes on at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.soon);
    await this.running;
    await this.lease.releaseAll();
  }

  /**
   * Every event up to this one, at most `upTo`, has been handed to afterCommit hooks (all of them,
   * when there are none).
   */
  async deliveredUpTo(upTo = Number.MAX_SAFE_INTEGER): Promise<number> {
    const position = this.hasAfterCommit()
      ? (((await this.ctx.store.get(EVENT_CURSORS, CURSOR_ID))?.position as number | undefined) ?? 0)
      : await lastEventSeq(this.ctx.store);
    return Math.min(position, upTo);
  }

  /** Runs once to the end of the log (tests and shutdown use it). */
  async drain(): Promise<void> {
    await this.running;
    await this.run();
  }

  private hasAfterCommit(): boolean {
    for (const hooks of this.ctx.hooks.values()) if (hooks.afterCommit) return true;
    return false;
  }

  private hookedEntities(): string[] {
    return [...this.ctx.hooks].filter(([, hooks]) => hooks.afterCommit).map(([plural]) => plural);
  }

  /** One delivery pass at a time in this instance (polls, notices and drain() alike), so none overlap. */
  private run(): Promise<void> {
    const pass = this.passes.then(() => this.deliverPass());
    this.passes = pass;
    return pass;
  }

  private async deliverPass(): Promise<void> {
    try {
      await this.deliverNew();
      await this.retryDue();
    } catch (error) {
      this.ctx.logger.warn({ err: error }, 'afterCommit delivery paused; it resumes on the next poll');
    }
  }

  /**
   * Runs the afterCommit hooks of new events while this instance holds the cursor: each hook runs
   * under the lease (renewed first, only while it is still this instance's, and while the hook
   * runs), and after it the cursor moves past the event, so a crash runs again at most the hook in
   * flight. Events of entities without a hook are never read: the cursor passes them.
   */
  private async deliverNew(): Promise<void> {
    for (;;) {
      const position = await this.take();
      if (position === undefined) return;
      // Every event up to the counter's committed value is committed (the counter orders commits),
      // so the cursor may pass the events of entities without a hook unread.
      const last = await lastEventSeq(this.ctx.store);
      const hooked = this.hookedEntities();
      const events =
        last > position && hooked.length > 0
          ? await eventsAfter(this.ctx.store, position, BATCH, { upTo: last, entities: hooked })
          : [];
      for (const event of events) {
        if (this.stopped) return;
        const hook = this.hooksOf(event.entity)?.afterCommit;
        let error: string | undefined;
        try {
          error = hook ? await this.lease.during(CURSOR_ID, () => this.attempt(hook, event)) : undefined;
        } catch (lost) {
          if (lost instanceof LeaseLost) return;
          throw lost;
        }
        if (error) await this.recordFailure(event, error);
        if (!(await this.save(event.seq))) return;
      }
      if (events.length === BATCH) continue;
      if (last > (events.at(-1)?.seq ?? position)) await this.save(last);
      return;
    }
  }

  /** Moves the cursor to `seq`, only while this instance still holds the lease. */
  private save(seq: number): Promise<boolean> {
    return this.lease.save(CURSOR_ID, { position: seq });
  }

  /** Takes or renews the cursor's lease; the position to deliver after, or undefined when another instance holds it. */
  private async take(): Promise<number | undefined> {
    return ((await this.lease.take(CURSOR_ID))?.position as number | undefined) ?? undefined;
  }

  private async retryDue(): Promise<void> {
    const now = this.ctx.now();
    const due = await this.ctx.store.find(HOOK_DELIVERIES, {
      where: {
        and: [
          { field: 'status', op: 'eq', value: 'pending' },
          {
            or: [
              { field: 'nextAttemptAt', op: 'exists', value: false },
              { field: 'nextAttemptAt', op: 'lte', value: now.toISOString() },
            ],
          },
        ],
      },
      sort: [{ field: 'eventSeq', direction: 'asc' }],
      limit: 20,
    });
    for (const delivery of due) {
      if (this.stopped) return;
      // Claim it: push its next attempt past this one's time limit, unless another instance did first.
      const claimedUntil = new Date(now.getTime() + this.options.timeoutMs + 5_000).toISOString();
      const claimed = await this.ctx.store.update(
        HOOK_DELIVERIES,
        delivery.id,
        { nextAttemptAt: claimedUntil },
        {
          and: [
            { field: 'status', op: 'eq', value: 'pending' },
            { field: 'attempts', op: 'eq', value: delivery.attempts as number },
            delivery.nextAttemptAt
              ? { field: 'nextAttemptAt', op: 'eq', value: delivery.nextAttemptAt as string }
              : { field: 'nextAttemptAt', op: 'exists', value: false },
          ],
        },
      );
      if (!claimed) continue;
      const event = await eventAt(this.ctx.store, delivery.eventSeq as number);
      const hook = this.hooksOf(delivery.entity as string)?.afterCommit;
      const attempts = (delivery.attempts as number) + 1;
      const error =
        event && hook ? await this.attempt(hook, event) : 'the event or its afterCommit hook no longer exists';
      const at = this.ctx.now();
      if (!error) {
        await this.ctx.store.update(HOOK_DELIVERIES, delivery.id, {
          status: 'delivered',
          attempts,
          deliveredAt: at.toISOString(),
          nextAttemptAt: null,
          updatedAt: at.toISOString(),
        });
      } else {
        const failed = attempts >= this.options.attempts;
        await this.ctx.store.update(HOOK_DELIVERIES, delivery.id, {
          status: failed ? 'failed' : 'pending',
          attempts,
          lastError: error,
          nextAttemptAt: failed ? null : this.retryAt(at, attempts),
          updatedAt: at.toISOString(),
        });
        if (failed)
          this.ctx.logger.error(
            { delivery: delivery.id, entity: delivery.entity, error },
            'afterCommit failed for good',
          );
      }
    }
  }

  private async recordFailure(event: ChangeEvent, error: string): Promise<void> {
    const at = this.ctx.now();
    const failed = this.options.attempts <= 1;
    await this.ctx.store.insert(HOOK_DELIVERIES, {
      id: newId(),
      eventSeq: event.seq,
      entity: event.entity,
      entityId: event.entityId,
      event: event.event,
      status: failed ? 'failed' : 'pending',
      attempts: 1,
      nextAttemptAt: failed ? null : this.retryAt(at, 1),
      lastError: error,
      deliveredAt: null,
      createdAt: at.toISOString(),
      updatedAt: at.toISOString(),
    });
  }

  /** Doubling delays with a little jitter, so instances retrying together spread out. */
  private retryAt(at: Date, attempts: number): string {
    const delay = this.options.backoffMs * 2 ** (attempts - 1) * (1 + Math.random() * 0.1);
    return new Date(at.getTime() + delay).toISOString();
  }

  private hooksOf(plural: string): EntityHooks | undefined {
    return this.ctx.hooks.get(plural);
  }

  /** Runs a hook within its time limit; the error message, or undefined when it succeeded. */
  private async attempt(
    hook: NonNullable<EntityHooks['afterCommit']>,
    event: ChangeEvent,
  ): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await continueTrace(
        event.trace,
        `afterCommit ${event.entity}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'entigen.hook': 'afterCommit',
            'entigen.entity': event.entity,
            'entigen.event': event.event,
            'entigen.event.seq': event.seq,
          },
        },
        (_span, trace) => this.race(hook, event, (handle) => (timer = handle), trace),
      );
      return undefined;
    } catch (error) {
      this.ctx.logger.warn({ err: error, entity: event.entity, seq: event.seq }, 'afterCommit hook failed');
      return error instanceof Error ? error.message.slice(0, 2000) : String(error).slice(0, 2000);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The hook against its time limit; `started` gets the timer. */
  private async race(
    hook: NonNullable<EntityHooks['afterCommit']>,
    event: ChangeEvent,
    started: (timer: NodeJS.Timeout) => void,
    trace?: Context,
  ): Promise<void> {
    await Promise.race([
      hook({
        event: event.event,
        seq: event.seq,
        entity: event.entity,
        id: event.entityId,
        record: event.after ?? null,
        previous: event.before ?? null,
        caller: (await this.options.callerOf?.(event.userId ?? undefined)) ?? NOBODY,
        at: event.at,
        repositories: this.options.repositories?.(`afterCommit:${event.entity}`, trace),
      }),
      new Promise((_, reject) => {
        started(
          setTimeout(() => reject(new Error(`timed out after ${this.options.timeoutMs} ms`)), this.options.timeoutMs),
        );
      }),
    ]);
  }
}
