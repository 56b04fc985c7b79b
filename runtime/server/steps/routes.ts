import type { Express, RequestHandler } from 'express';
import { SetupState } from '../../auth/setup.js';
import { metrics } from '../../health/metrics.js';
import { createApp } from '../../http/createApp.js';
import type { DrainState } from '../../http/draining.js';
import type { RouteTable } from '../../http/methodNotAllowed.js';
import type { NodeListener } from '../../http/nodeAdapter.js';
import type { Base } from './base.js';
import type { Cluster } from './cluster.js';
import type { EventConsumers } from './events.js';
import type { Services } from './services.js';
import type { Upkeep } from './upkeep.js';

/** Where entigen answers; a host app's other paths are its own. */
const ENTIGEN_PATHS = /^\/(api\/(v1|docs|health|metrics)(\/|$)|setup(\/|$)|mcp$)/;

export interface Routes {
  app: Express;
  routes: RouteTable;
  /** What the server's port answers with: the Express app, or the node adapter in front of it. */
  listener: NodeListener;
  /** entigen's paths for a host Express app; every other request goes on. */
  handler: RequestHandler;
  drain: DrainState;
}

/** The HTTP app (the pipeline, the declared routes, the entity routes) and the adapters in front of it. */
export function withRoutes(
  { operator }: Base,
  { auth, ctx }: Services,
  { limiter, services, bus }: Cluster,
  { realtime, works }: EventConsumers,
  { scheduler }: Upkeep,
): Routes {
  const drain: DrainState = { draining: false };
  const { app, routes, listener } = createApp({
    auth,
    setup: new SetupState(ctx.store),
    limiter,
    metrics,
    drain,
    services,
    featureRouters: works.routers({ ctx, scheduler }),
    operator,
    realtime,
    cluster: bus ? () => bus.state() : undefined,
  });
  const handler: RequestHandler = (req, res, next) => {
    // Mounted at /api, the host has already cut /api from req.url: entigen's paths are whole again.
    const path = `${req.baseUrl}${req.url}`;
    if (!ENTIGEN_PATHS.test(path)) return next();
    req.url = path;
    req.baseUrl = '';
    app(req, res);
  };
  return { app, routes, listener, handler, drain };
}
