import type { RuntimeContext } from '../context/runtimeContext.js';
import { CHANGE_EVENTS, EVENT_CURSORS, WEBHOOK_DELIVERIES, WEBHOOKS } from '../model/collections.js';
import { eventAt, lastEventSeq, oldestEventSeq } from '../write/eventLog.js';

/** Webhooks listed in the health report (the rest are counted). */
const LISTED_WEBHOOKS = 100;

export interface EventStatistics {
  /** Events kept in the log, its first and last sequence numbers. */
  log: { size: number; oldestSeq: number | null; lastSeq: number };
  /** Realtime streams open on this instance. */
  openStreams: number;
  webhooks: {
    id: string;
    url: string;
    enabled: boolean;
    /** The oldest event the webhook has not settled yet (null: it is up to date). */
    oldestUndelivered: { seq: number; at: string } | null;
    pending: number;
    failed: number;
  }[];
  webhookCount: number;
}

/** For the administrator's health report: the event log, open streams, and how far each webhook has come. */
export async function eventStatistics(ctx: RuntimeContext, openStreams: number): Promise<EventStatistics> {
  const { store } = ctx;
  const [size, oldestSeq, lastSeq, webhookCount, webhooks] = await Promise.all([
    store.count(CHANGE_EVENTS, {}),
    oldestEventSeq(store),
    lastEventSeq(store),
    store.count(WEBHOOKS, {}),
    store.find(WEBHOOKS, { sort: [{ field: 'id', direction: 'asc' }], limit: LISTED_WEBHOOKS }),
  ]);
  const rows = await Promise.all(
    webhooks.map(async (webhook) => {
      const count = (status: string) =>
        store.count(WEBHOOK_DELIVERIES, {
          where: {
            and: [
              { field: 'webhookId', op: 'eq', value: webhook.id },
              { field: 'status', op: 'eq', value: status },
            ],
          },
        });
      const cursor = await store.get(EVENT_CURSORS, webhook.id);
      const position = (cursor?.position ?? webhook.startAfter ?? lastSeq) as number;
      const next = position < lastSeq ? await eventAt(store, position + 1) : undefined;
      return {
        id: webhook.id,
        url: webhook.url as string,
        enabled: webhook.enabled === true,
        oldestUndelivered: next ? { seq: next.seq, at: next.at } : null,
        pending: await count('pending'),
        failed: await count('failed'),
      };
    }),
  );
  return { log: { size, oldestSeq: oldestSeq ?? null, lastSeq }, openStreams, webhooks: rows, webhookCount };
}
