import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { Express, RequestHandler } from 'express';
import type { AuthContext } from '../auth/authContext.js';
import { hasAdmin } from '../auth/setup.js';
import { loadRuntimeConfig, type RuntimeConfig } from '../config/runtimeConfig.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { HookDispatcher } from '../events/hookDispatcher.js';
import type { LogFeed } from '../events/logFeed.js';
import type { RealtimeHub } from '../events/realtime/realtimeHub.js';
import type { WebhookDispatcher } from '../events/webhooks/webhookDispatcher.js';
import { answerClientError } from '../http/answerClientError.js';
import type { DrainState } from '../http/draining.js';
import { expressMessageClasses } from '../http/expressMessages.js';
import type { RouteTable } from '../http/methodNotAllowed.js';
import type { NodeListener } from '../http/nodeAdapter.js';
import type { Scheduler } from '../jobs/scheduler.js';
import type { Tracing } from '../telemetry/startTracing.js';
import { HOOKS_FEATURE, WEBHOOKS_FEATURE } from './features.js';
import type { StartOptions } from './options.js';
import { base, withTracing } from './steps/base.js';
import { withCluster } from './steps/cluster.js';
import { withEventConsumers } from './steps/events.js';
import { withRoutes } from './steps/routes.js';
import { withServices } from './steps/services.js';
import { withShutdown } from './steps/shutdown.js';
import { withStore } from './steps/store.js';
import { withUpkeep } from './steps/upkeep.js';

export type { StartOptions } from './options.js';

/** entigen ready to serve, without a port of its own: mount `handler` in an Express app. */
export interface Entigen {
  /** The whole Express app (every path answered: 404 for what is not entigen's). */
  app: Express;
  /**
   * Middleware for a host Express app: answers entigen's paths (`/api/v1/...`, `/api/docs`,
   * `/api/health`, `/api/metrics`, `/setup`) with entigen's whole pipeline and passes every other
   * request on. Mount it at `/` or at `/api` (`host.use('/api', entigen.handler)`).
   */
  handler: RequestHandler;
  ctx: RuntimeContext;
  config: RuntimeConfig;
  auth: AuthContext;
  routes: RouteTable;
  scheduler: Scheduler;
  /** Delivers afterCommit hooks from the event log (the hooks feature's work). */
  dispatcher?: HookDispatcher;
  /** The open realtime streams of this instance. */
  realtime: RealtimeHub;
  /** This instance's reader of the event log. */
  feed: LogFeed;
  /** Delivers change events to the webhooks entity's receivers (the webhooks feature's work). */
  webhooks?: WebhookDispatcher;
  /** Prunes the event log now (it also runs hourly): by age and count, never what a consumer still needs. */
  pruneLog(): Promise<number>;
  /** Stops the scheduler, the dispatcher and the sweeper, and closes the store (the host closes its server). */
  close(): Promise<void>;
}

export interface RunningServer extends Entigen {
  server: Server;
  url: string;
  /** Stops accepting, lets requests in flight finish (503 for new ones), closes the store; bounded by the grace period. */
  close(): Promise<void>;
}

/** Opens the store, prepares its schema, and listens. */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  // A port that is taken is said before anything is opened or written.
  const wanted = options.config ?? { server: loadRuntimeConfig(options.root, options.env ?? process.env).server };
  const port = options.port ?? options.overrides?.server?.port ?? wanted.server.port;
  const host = options.host ?? options.overrides?.server?.host ?? wanted.server.host;
  await ensurePortFree(port, host);
  const entigen = await buildEntigen(options);
  const { config, ctx } = entigen;
  const logger = ctx.logger;
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      // Requests and responses are born with the app's Express prototypes (expressMessages.ts).
      const listening = createServer(expressMessageClasses(entigen.app), entigen.listener);
      listening.once('error', reject);
      listening.listen(port, host, () => resolve(listening));
    });
  } catch (error) {
    await entigen.close();
    throw portProblem(error, port, host) ?? error;
  }
  server.on('clientError', answerClientError);
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${boundPort}`;
  const listening = typeof address === 'object' && address ? `${address.address}:${address.port}` : `${host}:${port}`;
  entigen.auth.listeningUrl = url;
  const pending = !(await hasAdmin(ctx.store));
  const next = pending ? `open ${url}/setup to create the administrator` : `API reference at ${url}/api/docs`;
  logger.info(
    {
      url,
      listening,
      ...(pending ? { setup: `${url}/setup` } : {}),
      docs: `${url}/api/docs`,
      store: ctx.store.kind,
      redis: entigen.redis,
      ...(entigen.tracing ? { traces: `${entigen.tracing.protocol} to ${entigen.tracing.endpoint}` } : {}),
      handlers: Object.keys(options.handlers ?? {}),
    },
    `entigen listening on ${listening} (${url}): ${next}`,
  );
  let closing: Promise<void> | undefined;
  return {
    ...entigen,
    server,
    url,
    close() {
      closing ??= (async () => {
        entigen.drain.draining = true;
        await Promise.all([drainConnections(server, config.server.shutdownGraceMs), entigen.stopWork()]);
        await entigen.close();
      })();
      return closing;
    },
  };
}

/** What startServer needs besides the public face: the drain flag and whether Redis is in use. */
interface EntigenInternals extends Entigen {
  /** What the server's port answers with: the Express app, or the node adapter in front of it. */
  listener: NodeListener;
  drain: DrainState;
  redis: boolean;
  /** OpenTelemetry's SDK, when traces are on. */
  tracing?: Tracing;
  /** Stops the scheduler, the dispatcher and the sweeper (close does this first, then closes the store). */
  stopWork(): Promise<void>;
}

/** Opens the store, prepares its schema and builds the app, the scheduler and the event dispatcher; listens nowhere. */
export function createEntigen(options: Omit<StartOptions, 'port' | 'host'>): Promise<Entigen> {
  return buildEntigen(options);
}

/**
 * The composition, in the order ARCHITECTURE.md draws it: settings, the store, the services
 * (context, mail, identity), the cluster (Redis, the bus), the consumers of the event log, the
 * scheduler and sweeps, the routes and their adapters, and the way down.
 */
async function buildEntigen(options: Omit<StartOptions, 'port' | 'host'>): Promise<EntigenInternals> {
  const settings = await withTracing(base(options));
  const stores = await withStore(settings);
  const services = await withServices(settings, stores);
  const cluster = await withCluster(settings, stores);
  const events = await withEventConsumers(settings, stores, services, cluster);
  const upkeep = withUpkeep(settings, services, events);
  const http = withRoutes(settings, services, cluster, events, upkeep);
  const shutdown = withShutdown(settings, stores, cluster, events, upkeep, http, services);
  const { feed, realtime, works } = events;
  return {
    ...http,
    ...shutdown,
    dispatcher: works.of(HOOKS_FEATURE),
    feed,
    realtime,
    webhooks: works.of(WEBHOOKS_FEATURE),
    ctx: services.ctx,
    auth: services.auth,
    config: settings.config,
    scheduler: upkeep.scheduler,
    pruneLog: upkeep.pruneLog,
    redis: Boolean(cluster.redis),
    tracing: settings.tracing,
  };
}

/** Waits for requests in flight to finish, closing idle keep-alive connections; at the grace period, closes the rest. */
async function drainConnections(server: Server, graceMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Refuses a port another process holds (or one this user may not take) with what to do about it,
 * by taking it for a moment: the server then opens the store, and a taken port would have
 * failed only after the schema and the first administrator were written.
 */
async function ensurePortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', (error) => reject(portProblem(error, port, host) ?? error));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** A listen error a user can act on, in words; undefined for any other error. */
function portProblem(error: unknown, port: number, host: string): Error | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE')
    return new Error(
      `port ${port} on ${host} is already in use: is another instance running? Stop it, or choose another port with PORT or --port`,
    );
  if (code === 'EACCES')
    return new Error(
      `port ${port} on ${host} needs privileges this user does not have: choose a port above 1023 with PORT or --port (a proxy in front can answer on 80 and 443)`,
    );
  if (code === 'EADDRNOTAVAIL')
    return new Error(
      `${host} is not an address of this machine: set HOST or --host to one of its addresses, or 0.0.0.0`,
    );
  return undefined;
}
