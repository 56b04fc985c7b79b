import type { Request, Router } from 'express';
import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import { newDetails, validationError } from '../errors/apiError.js';
import { lastEventSeq, oldestEventSeq } from '../events/eventLog.js';
import type { RealtimeHub } from '../events/realtime/realtimeHub.js';
import { STREAM_ERROR_EVENT } from '../events/realtime/realtimeStream.js';
import { type Subscription, SubscriptionView } from '../events/realtime/subscriptionView.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import type { EntityModel } from '../model/types.js';
import { exactRouter } from './exactRouter.js';

export const REALTIME_PATH = '/api/v1/realtime';
const PARAMETERS = ['entities', 'includeArchived', 'select', 'tenant', 'lastEventId'];
const MAX_SELECT = 100;
const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

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
  const router = exactRouter();
  router.get('/', async (req, res) => {
    const tenant = single(req.query.tenant);
    const caller = tenant ? { ...req.caller, requestedTenantId: tenant } : req.caller;
    const { subscription, resumeAfter } = parseRealtimeQuery(ctx, req);
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
  });
  return router;
}

function parseRealtimeQuery(ctx: RuntimeContext, req: Request): { subscription: Subscription; resumeAfter?: number } {
  const details = newDetails();
  for (const name of Object.keys(req.query))
    if (!PARAMETERS.includes(name)) details[name] = `is not a parameter of realtime (${PARAMETERS.join(', ')})`;

  const entities: EntityModel[] = [];
  const names = list(req.query.entities);
  if (names === undefined || names.length === 0) details.entities = 'is required: entity plurals, comma-separated';
  for (const name of names ?? []) {
    const entity = ctx.registry.entities.get(name);
    if (!entity?.routes.some(([, , route]) => route === 'list'))
      details.entities = `"${name}" is not an entity you can subscribe to`;
    else if (!entities.includes(entity.model)) entities.push(entity.model);
  }

  let includeArchived = false;
  if (req.query.includeArchived !== undefined) {
    const value = single(req.query.includeArchived);
    if (value !== 'true' && value !== 'false') details.includeArchived = 'must be true or false';
    includeArchived = value === 'true';
  }

  let select: string[] | undefined;
  if (req.query.select !== undefined) {
    select = list(req.query.select);
    if (!select || select.length === 0 || select.length > MAX_SELECT)
      details.select = `must name 1 to ${MAX_SELECT} fields`;
    else
      for (const name of select)
        if (!entities.some((e) => e.fields.some((f) => f.name === name && !f.hidden)))
          details.select = `"${name}" is not a field of the subscribed entities`;
  }

  if (req.query.tenant !== undefined) {
    const tenant = single(req.query.tenant);
    if (!tenant || !OBJECT_ID.test(tenant)) details.tenant = 'must be a tenant id';
    else if (req.caller.requestedTenantId !== undefined && req.caller.requestedTenantId !== tenant)
      details.tenant = 'names another tenant than x-tenant-id';
  }

  let resumeAfter: number | undefined;
  const header = req.headers['last-event-id'];
  const resume = header !== undefined ? header : single(req.query.lastEventId);
  if (resume !== undefined && resume !== '') {
    const text = Array.isArray(resume) ? '' : resume.trim();
    resumeAfter = /^\d{1,15}$/.test(text) ? Number(text) : undefined;
    if (resumeAfter === undefined) details.lastEventId = 'must be the id of an event this stream sent (an integer)';
  }

  if (Object.keys(details).length > 0) throw validationError(details);
  return { subscription: { entities, includeArchived, ...(select ? { select } : {}) }, resumeAfter };
}

/** A query value given once (repeated or nested values are not). */
function single(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Comma-separated or repeated values; undefined when not strings. */
function list(value: unknown): string[] | undefined {
  const parts = typeof value === 'string' ? [value] : Array.isArray(value) ? value : undefined;
  if (!parts?.every((p) => typeof p === 'string')) return undefined;
  return parts
    .flatMap((p: string) => p.split(','))
    .map((p) => p.trim())
    .filter(Boolean);
}
