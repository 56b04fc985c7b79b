import type { NextFunction, Request, Response } from 'express';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { Metrics } from './metrics.js';

export interface HealthOptions {
  ctx: RuntimeContext;
  metrics: Metrics;
  /** Extra services to report, such as Redis: name -> ping. */
  services: Record<string, () => Promise<void>>;
  /** The authenticate middleware; health runs before it in the pipeline and calls it itself. */
  authenticate(req: Request, res: Response, next: NextFunction): Promise<void>;
  /** The event log, realtime streams and webhooks, for administrators. */
  events?(): Promise<unknown>;
  /** The bus between instances (channels, staleness), for administrators; none: a single instance. */
  cluster?(): unknown;
}

/** Whether the request carries an admin credential; any failure (database down included) means no. */
async function isAdmin(req: Request, res: Response, authenticate: HealthOptions['authenticate']): Promise<boolean> {
  if (!req.headers.authorization && !req.headers.cookie) return false;
  try {
    await authenticate(req, res, () => undefined);
    return req.caller?.isAdmin === true;
  } catch {
    return false;
  }
}

async function timed(ping: () => Promise<void>): Promise<{ status: 'up' | 'down'; latencyMs: number; error?: string }> {
  const started = performance.now();
  try {
    await ping();
    return { status: 'up', latencyMs: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    return {
      status: 'down',
      latencyMs: Math.round((performance.now() - started) * 10) / 10,
      error: (error as Error).message,
    };
  }
}

/** GET /api/health: `{ status, timestamp }` for all; admins also get the statistics. 503 when the database is down. */
export function healthRoute({ ctx, metrics, services, authenticate, events, cluster }: HealthOptions) {
  return async function health(req: Request, res: Response): Promise<void> {
    const database = await timed(() => ctx.store.ping());
    const status = database.status === 'up' ? 'ok' : 'error';
    res.setHeader('Cache-Control', 'no-store');
    const body: Record<string, unknown> = { status, timestamp: ctx.now().toISOString() };
    if (await isAdmin(req, res, authenticate)) {
      const memory = process.memoryUsage();
      const checked = Object.fromEntries(
        await Promise.all(Object.entries(services).map(async ([name, ping]) => [name, await timed(ping)])),
      );
      Object.assign(body, {
        uptime: Math.round((Date.now() - metrics.startedAt) / 1000),
        requests: {
          total: metrics.requests,
          errors: metrics.errors,
          clientErrors: metrics.clientErrors,
          errorRate: metrics.requests ? Math.round((metrics.errors / metrics.requests) * 10_000) / 10_000 : 0,
        },
        memory: { rss: memory.rss, heapUsed: memory.heapUsed, heapTotal: memory.heapTotal, external: memory.external },
        slowestEndpoints: metrics.slowest(),
        services: { database: { kind: ctx.store.kind, status: database.status }, ...checked },
        externalCalls: metrics.external(),
        database: {
          status: database.status,
          latencyMs: database.latencyMs,
          kind: ctx.store.kind,
          ...(database.error ? { error: database.error } : {}),
        },
        cluster: cluster?.() ?? { transport: 'none', up: true },
      });
      if (events && database.status === 'up') {
        try {
          body.events = await events();
        } catch (error) {
          ctx.logger.warn({ err: error }, 'event statistics failed');
        }
      }
    }
    res.status(status === 'ok' ? 200 : 503).json(body);
  };
}
