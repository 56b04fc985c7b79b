import { randomUUID } from 'node:crypto';
import type { WebhooksConfig } from '../../config/runtimeConfig.js';
import type { RuntimeContext } from '../../context/runtimeContext.js';
import { presentRecord } from '../../entities/presentRecord.js';
import { EVENT_CURSORS, WEBHOOK_DELIVERIES, WEBHOOKS } from '../../model/collections.js';
import { LeaseLost, RowLease } from '../../store/rowLease.js';
import { type Doc, UniqueConflict } from '../../store/types.js';
import { continueTrace, failSpanWith, injectTraceHeaders, SpanKind } from '../../telemetry/tracing.js';
import { type ChangeEvent, eventAt, lastEventSeq } from '../../write/eventLog.js';
import { newId } from '../../write/prepareWrite.js';
import type { LogFeed } from '../logFeed.js';
import { type PostOutcome, postWebhook } from './postWebhook.js';
import { signatureHeaders } from './signature.js';

/** How often due retries are looked for when no event arrives. */
const TICK_MS = 1000;
const BATCH = 100;

/** The body of a delivery. */
export interface WebhookPayload {
  id: string;
  type: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

/** Whether a webhook wants an event: its entity list (when set) and one of its patterns. */
export function webhookWants(webhook: Doc, event: Pick<ChangeEvent, 'entity' | 'event'>): boolean {
  const entities = (webhook.entities as string[] | undefined) ?? [];
  if (entities.length > 0 && !entities.includes(event.entity)) return false;
  const [entity, type] = [event.entity, event.event];
  return ((webhook.events as string[] | undefined) ?? ['*']).some((pattern) => {
    if (pattern === '*' || pattern === '*.*') return true;
    const [p, t] = pattern.split('.');
    return (p === '*' || p === entity) && (t === '*' || t === type);
  });
}

/** The cursor row of one webhook in eventCursors. */
const cursorName = (webhookId: string) => `webhook:${webhookId}`;

/**
 * Delivers change events to webhooks, at least once and in log order per webhook. Each webhook
 * has a cursor in eventCursors (its row id is the webhook's id) under a lease, so one instance
 * at a time delivers for it. An event is POSTed, then recorded in webhookDeliveries, then the
 * cursor moves: a crash in between sends it again. A failed attempt holds the webhook at that
 * event (a pending row with its next attempt) until it is delivered or fails for good (a dead
 * letter), then the cursor moves on. Redeliveries and replays an administrator asks for are
 * `manual` rows, sent beside the ordered stream.
 */
export class WebhookDispatcher {
  private readonly lease: RowLease;
  private readonly serving = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private timer?: NodeJS.Timeout;
  private listing?: Promise<void>;
  private unlisten?: () => void;
  private stopped = false;
  private relist = false;
  /** When the earliest retry timer fires. */
  private soonest?: number;
  /** Whether the last listing found an enabled webhook: only then does the feed read events for them. */
  private anyEnabled = true;

  constructor(
    private readonly ctx: RuntimeContext,
    private readonly config: WebhooksConfig,
    private readonly feed: LogFeed,
  ) {
    this.lease = new RowLease(ctx.store, EVENT_CURSORS, randomUUID(), config.leaseMs, ctx.now);
  }

  start(): void {
    this.unlisten = this.feed.listen(
      () => this.wake(),
      () => this.anyEnabled,
    );
    this.timer = setInterval(() => this.wake(), TICK_MS);
    this.timer.unref();
    this.wake();
  }

  /** Stops taking work, waits for the deliveries in flight and lets every cursor it holds go. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    clearInterval(this.timer);
    await this.listing;
    await Promise.all(this.serving.values());
    await this.lease.releaseAll();
  }

  /** Looks at every enabled webhook now (new events, due retries, manual deliveries). */
  wake(): void {
    if (this.stopped) return;
    if (this.listing) {
      this.relist = true;
      return;
    }
    this.listing = (async () => {
      try {
        const list = () =>
          this.ctx.store.find(WEBHOOKS, { where: { field: 'enabled', op: 'eq', value: true }, limit: 1000 });
        // Woken after every commit: the list is remembered until the webhooks are written.
        const webhooks = this.ctx.store.remember
          ? await this.ctx.store.remember('webhooks\u0000enabled', [WEBHOOKS], list)
          : await list();
        this.anyEnabled = webhooks.length > 0;
        for (const webhook of webhooks) this.serve(webhook);
      } catch (error) {
        this.ctx.logger.warn({ err: error }, 'listing webhooks failed; the next tick tries again');
      }
    })().finally(() => {
      this.listing = undefined;
      if (this.relist) {
        this.relist = false;
        this.wake();
      }
    });
  }

  /**
   * Every enabled webhook has delivered or dead-lettered the events up to this one (the log may
   * be pruned up to it); `last` when no webhook is enabled.
   */
  async deliveredUpTo(last: number): Promise<number> {
    const webhooks = await this.ctx.store.find(WEBHOOKS, {
      where: { field: 'enabled', op: 'eq', value: true },
      select: ['startAfter'],
      limit: 1000,
    });
    let floor = last;
    for (const webhook of webhooks) {
      const cursor = await this.ctx.store.get(EVENT_CURSORS, webhook.id);
      const position = (cursor?.position ?? webhook.startAfter ?? 0) as number;
      floor = Math.min(floor, position);
    }
    return floor;
  }

  /** Wakes before the next tick when a retry falls due sooner. */
  private wakeAt(due: number): void {
    const delay = due - this.ctx.now().getTime();
    if (delay >= TICK_MS || (this.soonest !== undefined && this.soonest <= due)) return;
    this.soonest = due;
    const timer = setTimeout(() => {
      this.soonest = undefined;
      this.wake();
    }, delay + 5);
    timer.unref();
  }

  /** Resolves when no delivery is in flight (tests). */
  async idle(): Promise<void> {
    while (this.listing || this.serving.size > 0) {
      await this.listing;
      await Promise.all(this.serving.values());
    }
  }

  private serve(webhook: Doc): void {
    if (this.serving.has(webhook.id)) {
      this.again.add(webhook.id);
      return;
    }
    const run = this.deliverFor(webhook)
      .catch((error) =>
        this.ctx.logger.warn(
          { err: error, webhook: webhook.id },
          'webhook delivery paused; it resumes on the next tick',
        ),
      )
      .finally(() => {
        this.serving.delete(webhook.id);
        if (this.again.delete(webhook.id) && !this.stopped) this.serve(webhook);
      });
    this.serving.set(webhook.id, run);
  }

  /**
   * Delivers for one webhook while this instance holds its cursor. Every POST runs under the lease
   * (renewed first, only while it is still this instance's, and while the POST runs), and after it
   * the delivery row and the cursor are written in one transaction that fails if the lease was
   * lost; a crash therefore sends again at most the event in flight.
   */
  private async deliverFor(webhook: Doc): Promise<void> {
    await this.ensureCursor(webhook);
    const cursor = await this.lease.take(webhook.id);
    if (!cursor) return;
    let position = cursor.position as number;
    try {
      while (!this.stopped) {
        const head = await this.pendingHead(webhook.id);
        if (head) {
          const due = typeof head.nextAttemptAt === 'string' ? Date.parse(head.nextAttemptAt) : 0;
          if (due > this.ctx.now().getTime()) {
            this.wakeAt(due);
            break;
          }
          const event = await eventAt(this.ctx.store, head.eventSeq as number);
          const settled = await this.retry(webhook, head, event, Math.max(position, head.eventSeq as number));
          // Still pending: the next round schedules its next attempt.
          if (settled) position = Math.max(position, head.eventSeq as number);
          continue;
        }
        const events = await this.feed.after(position, BATCH);
        if (events.length === 0) break;
        let saved = position;
        for (const event of events) {
          if (this.stopped) break;
          if (!webhookWants(webhook, event)) {
            position = event.seq;
            continue;
          }
          const settled = await this.first(webhook, event, position);
          saved = settled ? event.seq : position;
          // A held event is the pending head now: the next round schedules its retry.
          if (!settled) break;
          position = event.seq;
        }
        // Events this webhook does not want move the cursor once per batch.
        if (position !== saved && !(await this.lease.save(webhook.id, { position }))) return;
      }
      await this.manualDue(webhook);
    } catch (error) {
      if (error instanceof LeaseLost) return;
      throw error;
    }
  }

  /** One POST under the cursor's lease; throws LeaseLost (and sends nothing) when the lease was lost. */
  private postHeld(webhook: Doc, event: ChangeEvent): Promise<PostOutcome> {
    return this.lease.during(webhook.id, () => this.post(webhook, event));
  }

  /** The cursor row: new webhooks start after the last event before they existed. */
  private async ensureCursor(webhook: Doc): Promise<void> {
    if (await this.ctx.store.get(EVENT_CURSORS, webhook.id)) return;
    try {
      await this.ctx.store.insert(EVENT_CURSORS, {
        id: webhook.id,
        name: cursorName(webhook.id),
        position: (webhook.startAfter as number | undefined) ?? (await lastEventSeq(this.ctx.store)),
        leaseOwner: null,
        leaseUntil: null,
      });
    } catch (error) {
      if (!(error instanceof UniqueConflict)) throw error;
    }
  }

  private async pendingHead(webhookId: string): Promise<Doc | undefined> {
    const [head] = await this.ctx.store.find(WEBHOOK_DELIVERIES, {
      where: {
        and: [
          { field: 'webhookId', op: 'eq', value: webhookId },
          { field: 'status', op: 'eq', value: 'pending' },
          { field: 'manual', op: 'eq', value: false },
        ],
      },
      sort: [{ field: 'eventSeq', direction: 'asc' }],
      limit: 1,
    });
    return head;
  }

  /**
   * The first attempt at an event; true when it is settled (delivered or failed for good). Its row
   * carries the stream key `<webhookId>:<eventSeq>`, unique, so no event gets two rows; the row and
   * the cursor (past the event when settled, else where it was) are written together, under the lease.
   */
  private async first(webhook: Doc, event: ChangeEvent, position: number): Promise<boolean> {
    const outcome = await this.postHeld(webhook, event);
    const at = this.ctx.now().toISOString();
    const status = this.statusAfter(outcome, 1);
    await this.ctx.store.transaction(async (tx) => {
      await this.lease.saveOrThrow(webhook.id, { position: status === 'pending' ? position : event.seq }, tx);
      try {
        await tx.insert(WEBHOOK_DELIVERIES, {
          id: newId(),
          webhookId: webhook.id,
          eventSeq: event.seq,
          streamKey: `${webhook.id}:${event.seq}`,
          eventType: `${event.entity}.${event.event}`,
          entityId: event.entityId,
          manual: false,
          createdAt: at,
          ...this.outcomeFields(outcome, 1, status),
        });
      } catch (error) {
        // Another holder recorded this event already: this one is no longer the cursor's.
        if (error instanceof UniqueConflict) throw new LeaseLost(webhook.id);
        throw error;
      }
    });
    return status !== 'pending';
  }

  /**
   * Another attempt of a stored delivery; true when it is settled. An ordered row moves the
   * cursor to `position` when it settles, in the same transaction, under the lease.
   */
  private async retry(
    webhook: Doc,
    delivery: Doc,
    event: ChangeEvent | undefined,
    position?: number,
  ): Promise<boolean> {
    const attempts = (delivery.attempts as number) + 1;
    const outcome: PostOutcome = event
      ? await this.postHeld(webhook, event)
      : { ok: false, latencyMs: 0, error: 'the event is no longer in the log' };
    const status = event ? this.statusAfter(outcome, attempts) : 'failed';
    await this.ctx.store.transaction(async (tx) => {
      await this.lease.saveOrThrow(webhook.id, position !== undefined && status !== 'pending' ? { position } : {}, tx);
      await tx.update(WEBHOOK_DELIVERIES, delivery.id, this.outcomeFields(outcome, attempts, status));
    });
    return status !== 'pending';
  }

  /** Redeliveries and replays that are due, oldest event first. */
  private async manualDue(webhook: Doc): Promise<void> {
    const due = await this.ctx.store.find(WEBHOOK_DELIVERIES, {
      where: {
        and: [
          { field: 'webhookId', op: 'eq', value: webhook.id },
          { field: 'status', op: 'eq', value: 'pending' },
          { field: 'manual', op: 'eq', value: true },
          {
            or: [
              { field: 'nextAttemptAt', op: 'exists', value: false },
              { field: 'nextAttemptAt', op: 'lte', value: this.ctx.now().toISOString() },
            ],
          },
        ],
      },
      sort: [{ field: 'eventSeq', direction: 'asc' }],
      limit: 20,
    });
    for (const delivery of due) {
      if (this.stopped) return;
      await this.retry(webhook, delivery, await eventAt(this.ctx.store, delivery.eventSeq as number));
    }
  }

  private statusAfter(outcome: PostOutcome, attempts: number): 'delivered' | 'pending' | 'failed' {
    if (outcome.ok) return 'delivered';
    return attempts >= this.config.attempts ? 'failed' : 'pending';
  }

  private outcomeFields(outcome: PostOutcome, attempts: number, status: string): Record<string, unknown> {
    const at = this.ctx.now();
    if (status === 'failed')
      this.ctx.logger.error({ error: outcome.error, attempts }, 'a webhook delivery failed for good (dead letter)');
    return {
      status,
      attempts,
      responseCode: outcome.status ?? null,
      responseBody: outcome.body ?? null,
      latencyMs: outcome.latencyMs,
      lastError: outcome.error ?? null,
      deliveredAt: status === 'delivered' ? at.toISOString() : null,
      nextAttemptAt: status === 'pending' ? this.retryAt(at, attempts) : null,
      updatedAt: at.toISOString(),
    };
  }

  /** Exponential delays with jitter (±20%), so receivers coming back are not hit all at once. */
  private retryAt(at: Date, attempts: number): string {
    const delay = Math.min(this.config.backoffMs * 2 ** (attempts - 1), this.config.maxBackoffMs);
    return new Date(at.getTime() + delay * (0.8 + Math.random() * 0.4)).toISOString();
  }

  private async post(webhook: Doc, event: ChangeEvent): Promise<PostOutcome> {
    const body = JSON.stringify(this.payload(event));
    let secret: string;
    try {
      secret = this.ctx.cipher.decrypt(webhook.secret as string);
    } catch {
      return { ok: false, latencyMs: 0, error: 'the signing secret cannot be read; rotate it' };
    }
    const headers = signatureHeaders(secret, `msg_${event.id}`, this.ctx.now(), body);
    const target = webhookTarget(webhook.url as string);
    // A span in the trace of the write, whose traceparent the receiver gets too.
    return continueTrace(
      event.trace,
      `webhook ${event.entity}.${event.event}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': 'POST',
          ...target,
          'entigen.webhook.id': webhook.id,
          'entigen.event': `${event.entity}.${event.event}`,
          'entigen.event.seq': event.seq,
        },
      },
      async (span, trace) => {
        injectTraceHeaders(headers, trace);
        const outcome = await postWebhook(webhook.url as string, headers, body, {
          timeoutMs: this.config.timeoutMs,
          allowPrivate: this.config.allowPrivateTargets,
        });
        if (span) {
          if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
          if (!outcome.ok) failSpanWith(span, outcome.error ?? 'not delivered');
        }
        return outcome;
      },
    );
  }

  /** `{ id, type, occurredAt, data }`: the record as an administrator's GET shows it, `{ id }` for deletes. */
  private payload(event: ChangeEvent): WebhookPayload {
    const model = this.ctx.registry.entities.get(event.entity)?.model;
    const data =
      event.event === 'deleted' || !event.after || !model
        ? { id: event.entityId }
        : (presentRecord(model, event.after) as Record<string, unknown>);
    return { id: `msg_${event.id}`, type: `${event.entity}.${event.event}`, occurredAt: event.at, data };
  }
}

/** The receiver's host and port for a span (never its path or query, which may hold a token). */
function webhookTarget(url: string): Record<string, string | number> {
  try {
    const parsed = new URL(url);
    const port = Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80);
    return { 'server.address': parsed.hostname, 'server.port': port };
  } catch {
    return {};
  }
}
