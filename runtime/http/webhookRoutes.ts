import type { Router } from 'express';
import { features } from '../api/index.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { createOperation } from '../entities/create.js';
import { presentRecord } from '../entities/presentRecord.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { newWebhookSecret } from '../events/webhooks/signature.js';
import { type WebhookDispatcher, webhookWants } from '../events/webhooks/webhookDispatcher.js';
import { CHANGE_EVENTS, WEBHOOK_DELIVERIES, WEBHOOKS } from '../model/collections.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import type { Doc } from '../store/types.js';
import { type ChangeEvent, lastEventSeq } from '../write/eventLog.js';
import { newId } from '../write/prepareWrite.js';
import { DeclaredRouter } from './declaredRouter.js';

/** Events one replay may queue; a longer range is asked for in parts. */
export const MAX_REPLAY = 1000;
const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

/**
 * The webhook routes beyond the generic ones (administrators only):
 * - POST /webhooks: the generic create, answered with the signing secret in clear (the only time);
 * - POST /webhooks/{id}/rotate-secret: a new secret, shown once;
 * - POST /webhooks/{id}/replay `{ from, to? }`: sends the matching events after `from` up to `to` again.
 */
export function webhookRoutes(ctx: RuntimeContext, dispatcher: WebhookDispatcher): Router {
  const router = new DeclaredRouter(`/api/v1/${WEBHOOKS}`);
  // The generic create of the entity, answered with the signing secret in clear (the only time).
  router.router.post('/', async (req, res) => {
    const created = await createOperation({
      ctx,
      plural: WEBHOOKS,
      body: req.body,
      caller: req.caller,
      changeReason: req.get('x-change-reason'),
    });
    const stored = await ctx.store.get(WEBHOOKS, created.id);
    dispatcher.wake();
    res.status(201).json({ data: { ...created, secret: ctx.cipher.decrypt(stored!.secret as string) } });
  });
  router.json(features.rotateWebhookSecret, async ({ params }) => {
    const webhook = await webhookOf(ctx, params.id);
    const secret = newWebhookSecret();
    const now = ctx.now().toISOString();
    const updated = await ctx.store.update(WEBHOOKS, webhook.id, {
      secret: ctx.cipher.encrypt(secret),
      updatedAt: now,
    });
    if (!updated) throw notFound('Webhook');
    const model = ctx.registry.entities.get(WEBHOOKS)!.model;
    return { data: { ...presentRecord(model, updated), secret } };
  });
  router.json(features.replayWebhook, async ({ params, body }) => {
    const webhook = await webhookOf(ctx, params.id);
    const from = body.from;
    const to = body.to ?? (await lastEventSeq(ctx.store));
    if (to < from) throw validationError({ to: 'must not be before from' });
    const events = (await ctx.store.find(CHANGE_EVENTS, {
      where: {
        and: [
          { field: 'seq', op: 'gt', value: from },
          { field: 'seq', op: 'lte', value: to },
        ],
      },
      sort: [{ field: 'seq', direction: 'asc' }],
      limit: MAX_REPLAY + 1,
    })) as unknown as ChangeEvent[];
    if (events.length > MAX_REPLAY)
      throw validationError({ to: `the range holds more than ${MAX_REPLAY} events; replay it in parts` });
    const now = ctx.now().toISOString();
    const rows = events
      .filter((event) => webhookWants(webhook, event))
      .map((event) => ({
        id: newId(),
        webhookId: webhook.id,
        eventSeq: event.seq,
        eventType: `${event.entity}.${event.event}`,
        entityId: event.entityId,
        status: 'pending',
        attempts: 0,
        manual: true,
        nextAttemptAt: null,
        createdAt: now,
        updatedAt: now,
      }));
    if (rows.length > 0) await ctx.store.insertMany(WEBHOOK_DELIVERIES, rows);
    dispatcher.wake();
    return { data: { queued: rows.length, from, to } };
  });
  return router.router;
}

/** POST /webhookDeliveries/{id}/redeliver: a delivered or failed delivery is sent again (202). */
export function webhookDeliveryRoutes(ctx: RuntimeContext, dispatcher: WebhookDispatcher): Router {
  const router = new DeclaredRouter(`/api/v1/${WEBHOOK_DELIVERIES}`);
  router.json(features.redeliver, async ({ params }) => {
    const { id } = params;
    const delivery = OBJECT_ID.test(id) ? await ctx.store.get(WEBHOOK_DELIVERIES, id) : null;
    if (!delivery) throw notFound('Webhook delivery');
    if (delivery.status === 'pending') throw new ApiError('CONFLICT', 'This delivery is still pending');
    const updated = await ctx.store.update(
      WEBHOOK_DELIVERIES,
      id,
      {
        status: 'pending',
        manual: true,
        attempts: 0,
        nextAttemptAt: null,
        lastError: null,
        updatedAt: ctx.now().toISOString(),
      },
      { field: 'status', op: 'ne', value: 'pending' },
    );
    if (!updated) throw new ApiError('CONFLICT', 'This delivery is still pending');
    dispatcher.wake();
    const model = ctx.registry.entities.get(WEBHOOK_DELIVERIES)!.model;
    return { data: presentRecord(model, updated) };
  });
  return router.router;
}

async function webhookOf(ctx: RuntimeContext, id: string): Promise<Doc> {
  const webhook = OBJECT_ID.test(id) ? await ctx.store.get(WEBHOOKS, id) : null;
  if (!webhook) throw notFound('Webhook');
  return webhook;
}
