import type { Request, Router } from 'express';
import { features } from '../api/index.js';
import type { QueryOf } from '../api/route.js';
import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { newDetails, validationError } from '../errors/apiError.js';
import type { RealtimeHub } from '../events/realtime/realtimeHub.js';
import { STREAM_ERROR_EVENT } from '../events/realtime/realtimeStream.js';
import { type Subscription, SubscriptionView } from '../events/realtime/subscriptionView.js';
import type { EntityModel } from '../model/types.js';
import { lastEventSeq, oldestEventSeq } from '../write/eventLog.js';
import { DeclaredRouter } from './declaredRouter.js';

export const REALTIME_PATH = features.realtime.path;
const MAX_SELECT = 100;

export interface RealtimeRouteOptions {
  ctx: RuntimeContext;
  hub: RealtimeHub;
  /** Authenticates a request again (the stream's credential is checked on every heartbeat). */
  identify(req: Request): Promise<Caller>;
}

/**
 * GET /api/v1/realtime?entities=orders,comments: a Server-Sent Events stream of the changes to
 * those entities that the caller could see in their lists. `Last-Event-ID` (or `lastEventId`)
 * resumes after that event; `includeArchived=true` keeps archived records in view; `select`
 * narrows the records sent; `tenant` stands in for x-tenant-id (EventSource sends no headers).
 */
export function realtimeRoutes({ ctx, hub, identify }: RealtimeRouteOptions): Router {
  return new DeclaredRouter(REALTIME_PATH, ctx.registry.model).raw(features.realtime, async ({ req, res, query }) => {
    const tenant = query.tenant;
    if (tenant !== undefined && req.caller.requestedTenantId !== undefined && req.caller.requestedTenantId !== tenant)
      throw validationError({ tenant: 'names another tenant than x-tenant-id' });
    const caller = tenant ? { ...req.caller, requestedTenantId: tenant } : req.caller;
    const { subscription, resumeAfter } = parseRealtimeQuery(ctx, query, req.headers['last-event-id']);
    const view = new SubscriptionView(ctx, caller, subscription);
    await view.check();
    const holder = caller.user ? `user:${caller.user.id}` : `address:${req.ip}`;
    hub.admit(holder);
    const last = await lastEventSeq(ctx.store);
    if (resumeAfter !== undefined && resumeAfter > last) {
      throw validationError(
        { lastEventId: `is ahead of the event log (its last event is ${last}); subscribe without it` },
        'Last-Event-ID names an event this server never had',
      );
    }
    const expired = resumeAfter !== undefined && resumeAfter + 1 < ((await oldestEventSeq(ctx.store)) ?? last + 1);

    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    res.status(200);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    // Proxies such as nginx would otherwise hold events back to fill their buffers.
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
    res.write('retry: 2000\n\n');
    if (expired) {
      const message = `Events after ${resumeAfter} are no longer kept; reload the data, then subscribe without Last-Event-ID`;
      res.end(
        `event: ${STREAM_ERROR_EVENT}\ndata: ${JSON.stringify({ error: { code: 'EVENTS_EXPIRED', message } })}\n\n`,
      );
      return;
    }
    hub.open({
      res,
      holder,
      view,
      position: resumeAfter ?? last,
      recheck: async () => {
        const again = await identify(req);
        if (caller.user && again.user?.id !== caller.user.id) return undefined;
        return tenant ? { ...again, requestedTenantId: tenant } : again;
      },
    });
  }).router;
}

type RealtimeQuery = QueryOf<typeof features.realtime>;

/** The entities, fields and resume point of a subscription, from its checked query and Last-Event-ID. */
function parseRealtimeQuery(
  ctx: RuntimeContext,
  query: RealtimeQuery,
  header: string | string[] | undefined,
): { subscription: Subscription; resumeAfter?: number } {
  const details = newDetails();
  const entities: EntityModel[] = [];
  const names = list(query.entities);
  if (names.length === 0) details.entities = 'is required: entity plurals, comma-separated';
  for (const name of names) {
    const entity = ctx.registry.entities.get(name);
    if (!entity?.routes.some(([, , route]) => route === 'list'))
      details.entities = `"${name}" is not an entity you can subscribe to`;
    else if (!entities.includes(entity.model)) entities.push(entity.model);
  }

  let select: string[] | undefined;
  if (query.select !== undefined) {
    select = list(query.select);
    if (select.length === 0 || select.length > MAX_SELECT) details.select = `must name 1 to ${MAX_SELECT} fields`;
    else
      for (const name of select)
        if (!entities.some((e) => e.fields.some((f) => f.name === name && !f.hidden)))
          details.select = `"${name}" is not a field of the subscribed entities`;
  }

  let resumeAfter: number | undefined = query.lastEventId;
  if (header !== undefined && header !== '') {
    const text = Array.isArray(header) ? '' : header.trim();
    resumeAfter = /^\d{1,15}$/.test(text) ? Number(text) : undefined;
    if (resumeAfter === undefined) details.lastEventId = 'must be the id of an event this stream sent (an integer)';
  }

  if (Object.keys(details).length > 0) throw validationError(details);
  const includeArchived = query.includeArchived ?? false;
  return { subscription: { entities, includeArchived, ...(select ? { select } : {}) }, resumeAfter };
}

/** Repeated or comma-separated names. */
function list(value: string[]): string[] {
  return value
    .flatMap((part) => part.split(','))
    .map((part) => part.trim())
    .filter(Boolean);
}
