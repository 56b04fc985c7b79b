import { createServer, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import type { Express, RequestHandler } from 'express';
import { type Logger, pino } from 'pino';
import { type Caller, SYSTEM_CALLER } from '../access/caller.js';
import { callerForUser } from '../access/resolveCaller.js';
import { RoleTable } from '../access/roleTable.js';
import type { AuthContext, Mailer } from '../auth/authContext.js';
import { createFirstAdmin, hasAdmin, SetupState } from '../auth/setup.js';
import type { Bus } from '../cluster/bus.js';
import { RedisBus } from '../cluster/redisBus.js';
import { loadRuntimeConfig, type RuntimeConfig } from '../config/runtimeConfig.js';
import type { RuntimeContext } from '../context.js';
import { FieldCipher } from '../crypto/fieldCipher.js';
import { loadSecrets } from '../crypto/secrets.js';
import { hookTable, type Registry } from '../defineRegistry.js';
import { ensureEventSequence, pruneEvents } from '../events/eventLog.js';
import { HookDispatcher } from '../events/hookDispatcher.js';
import { LogFeed } from '../events/logFeed.js';
import { RealtimeHub } from '../events/realtime/realtimeHub.js';
import { WebhookDispatcher } from '../events/webhooks/webhookDispatcher.js';
import { metrics } from '../health/metrics.js';
import { OperatorMetrics } from '../health/operatorMetrics.js';
import { repositoryWriter } from '../hooks/repositoryWriter.js';
import { answerClientError } from '../http/answerClientError.js';
import { createApp } from '../http/createApp.js';
import type { DrainState } from '../http/draining.js';
import { expressMessageClasses } from '../http/expressMessages.js';
import { sweepIdempotencyRecords } from '../http/idempotency.js';
import type { RouteTable } from '../http/methodNotAllowed.js';
import type { NodeListener } from '../http/nodeAdapter.js';
import { type LimiterStore, memoryLimiterStore, redisLimiterStore } from '../http/rateLimit/limiterStore.js';
import { reconcileFileSchedules } from '../jobs/fileSchedules.js';
import { type JobHandler, Scheduler } from '../jobs/scheduler.js';
import { MailOutbox } from '../mail/mailOutbox.js';
import { MailTemplates } from '../mail/mailTemplates.js';
import { logTransport, smtpTransport } from '../mail/mailTransports.js';
import { sendTestMail } from '../mail/testMail.js';
import { checkMigrations } from '../migrations/applyMigrations.js';
import { USERS } from '../model/collections.js';
import type { RepositoryWriter } from '../repository.js';
import { CountCache, CountCachingStore } from '../store/countCache.js';
import { MeasuredStore } from '../store/measuredStore.js';
import { openStore } from '../store/openStore.js';
import type { PgStore } from '../store/postgres/pgStore.js';
import { SqliteStore } from '../store/sqlite/sqliteStore.js';
import type { Store } from '../store/types.js';
import { featureRules } from './featureRules.js';

/**
 * Counts are cached (store/countCache.ts) where every write can be heard: the embedded store
 * (other processes' commits show in PRAGMA data_version), PostgreSQL (instances tell each other
 * what they wrote through LISTEN/NOTIFY), or any store with REDIS_URL. ENTIGEN_COUNT_CACHE=on|off
 * decides otherwise (on: a single instance on MongoDB without Redis).
 */
function countCacheEnabled(env: NodeJS.ProcessEnv, kind: string): boolean {
  if (env.ENTIGEN_COUNT_CACHE === 'on') return true;
  if (env.ENTIGEN_COUNT_CACHE === 'off') return false;
  return kind === 'sqlite' || kind === 'postgres' || Boolean(env.REDIS_URL);
}

export interface StartOptions {
  registry: Registry;
  /** Project folder: config, data/ and development secrets live here. */
  root: string;
  env?: NodeJS.ProcessEnv;
  port?: number;
  host?: string;
  logger?: Logger;
  /** Sends password-reset mail; default: written to the log. */
  mailer?: Mailer;
  /** Replaces parts of the configuration (tests: rate limits). */
  overrides?: Partial<RuntimeConfig>;
  /** The clock of every operation and limit; tests move it. */
  now?: () => Date;
  /** Job handlers by name (the module named by jobs.handlers). */
  handlers?: Record<string, JobHandler>;
  /** Builds the typed repositories handed to job handlers (generated/index.ts exports it). */
  repositories?: (store: Store, writer?: RepositoryWriter) => unknown;
  /** false: do not look for due jobs (tests drive Scheduler.tick themselves). */
  schedule?: boolean;
  /** A store opened by the caller (tests: the MongoDB adapter on an in-memory driver); else DATABASE_URL's. */
  store?: Store;
  /** Hook modules (`defineHooks(...)` results) instead of those generated/index.ts wires into the registry. */
  hooks?: readonly unknown[];
}

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
  /** Delivers afterCommit hooks from the event log. */
  dispatcher: HookDispatcher;
  /** The open realtime streams of this instance. */
  realtime: RealtimeHub;
  /** This instance's reader of the event log. */
  feed: LogFeed;
  /** Delivers change events to the webhooks entity's receivers. */
  webhooks: WebhookDispatcher;
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

/** Where entigen answers; a host app's other paths are its own. */
const ENTIGEN_PATHS = /^\/(api\/(v1|docs|health|metrics)(\/|$)|setup(\/|$))/;

const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** Opens the store, prepares its schema, and listens. */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const entigen = await buildEntigen(options);
  const { config, ctx } = entigen;
  const logger = ctx.logger;
  const port = options.port ?? config.server.port;
  const host = options.host ?? config.server.host;
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
    throw error;
  }
  server.on('clientError', answerClientError);
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${boundPort}`;
  entigen.auth.listeningUrl = url;
  const pending = !(await hasAdmin(ctx.store));
  const next = pending ? `open ${url}/setup to create the administrator` : `API reference at ${url}/api/docs`;
  logger.info(
    {
      url,
      ...(pending ? { setup: `${url}/setup` } : {}),
      docs: `${url}/api/docs`,
      store: ctx.store.kind,
      redis: entigen.redis,
      handlers: Object.keys(options.handlers ?? {}),
    },
    `entigen listening on ${url}: ${next}`,
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

/** The author of a logged change as a Caller, as they are now; a deleted user keeps only its id. */
async function callerOfChange(store: Store, roles: RoleTable, userId: string | undefined): Promise<Caller> {
  const none: Caller = { roles: [], permissions: new Set<string>(), isAdmin: false };
  if (!userId) return none;
  const user = await store.get(USERS, userId);
  if (!user) return { ...none, user: { id: userId, email: '', displayName: '' } };
  return callerForUser(user, roles);
}

/** What startServer needs besides the public face: the drain flag and whether Redis is in use. */
interface EntigenInternals extends Entigen {
  /** What the server's port answers with: the Express app, or the node adapter in front of it. */
  listener: NodeListener;
  drain: DrainState;
  redis: boolean;
  /** Stops the scheduler, the dispatcher and the sweeper (close does this first, then closes the store). */
  stopWork(): Promise<void>;
}

/** Opens the store, prepares its schema and builds the app, the scheduler and the event dispatcher; listens nowhere. */
export function createEntigen(options: Omit<StartOptions, 'port' | 'host'>): Promise<Entigen> {
  return buildEntigen(options);
}

async function buildEntigen(options: Omit<StartOptions, 'port' | 'host'>): Promise<EntigenInternals> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? pino({ level: env.LOG_LEVEL ?? 'info' });
  const config = { ...loadRuntimeConfig(options.root, env), ...options.overrides };
  const secrets = loadSecrets({
    env,
    devFile: join(options.root, 'data', 'secrets.json'),
    warn: (message) => logger.warn(message),
  });
  const operator = new OperatorMetrics();
  const opened = options.store ?? (await openStore(env.DATABASE_URL, options.root));
  const countCache = countCacheEnabled(env, opened.kind) ? new CountCache() : undefined;
  const store = new MeasuredStore(
    countCache ? new CountCachingStore(opened, countCache) : opened,
    (kind, operation, outcome, seconds) => operator.storeCall(kind, operation, outcome, seconds),
  );
  const schema = await store.init(options.registry.model);
  // Index changes are worth a line: building one on a large table takes a while.
  if (schema.added.length > 0)
    logger.info({ indexes: schema.added }, `schema sync: added ${schema.added.length} index(es)`);
  if (schema.dropped.length > 0)
    logger.info(
      { indexes: schema.dropped },
      `schema sync: dropped ${schema.dropped.length} index(es) no longer planned`,
    );
  try {
    await checkMigrations(store, options.root, options.registry.model, options.now ?? (() => new Date()));
    const declared = options.registry.model.jobSchedules ?? [];
    const jobs = await reconcileFileSchedules(
      store,
      declared,
      Object.keys(options.handlers ?? {}),
      (options.now ?? (() => new Date()))(),
    );
    if (jobs.created.length + jobs.updated.length + jobs.released.length > 0)
      logger.info(jobs, 'scheduled jobs of entigen.config.yaml: created, updated, released');
  } catch (error) {
    await store.close();
    throw error;
  }
  const ctx: RuntimeContext = {
    registry: options.registry,
    store,
    secrets,
    cipher: new FieldCipher(secrets.encryption),
    rules: featureRules(options.registry.model, config, Object.keys(options.handlers ?? {})),
    hooks: options.hooks ? hookTable(options.registry.entities, options.hooks) : (options.registry.hooks ?? new Map()),
    logger,
    now: options.now ?? (() => new Date()),
  };
  // Mail goes out through a durable queue (runtime/mail/mailOutbox.ts); without a server, to the log.
  const { url: mailUrl } = config.mail;
  if (!mailUrl) logger.info('mail is not configured (MAIL_URL or mail.url): mails are written to the log');
  const transport = mailUrl ? smtpTransport({ ...config.mail, url: mailUrl }) : logTransport(logger);
  const outbox = new MailOutbox(
    ctx,
    config.mail,
    transport,
    new FieldCipher(`mail:${secrets.encryption ?? secrets.signing}`),
    logger,
    config.mail.pollMs,
  );
  operator.watch('entigen_mails_sent', 'Mails this instance delivered to the mail server', () => outbox.sent);
  operator.watch(
    'entigen_mail_attempts_failed',
    'Mail attempts that failed (retried or failed)',
    () => outbox.failedAttempts,
  );
  if (opened instanceof SqliteStore) {
    const commits = () => opened.commitStatistics();
    operator.watch('entigen_group_commits', 'Commits of the embedded store (each one fsync)', () => commits().groups);
    operator.watch('entigen_group_commit_transactions', 'Transactions those commits carried', () => commits().members);
  }
  const templates = new MailTemplates(options.root);
  const auth: AuthContext = {
    ctx,
    config,
    roles: new RoleTable(options.registry.model, store),
    cookieName: `${options.registry.model.app.name}_uid`,
    mailer: options.mailer ?? { send: (mail) => outbox.enqueue(mail) },
    templates,
    env,
    publicUrl: () => config.server.publicUrl ?? auth.listeningUrl ?? `http://localhost:${config.server.port}`,
    testMail: (to) => sendTestMail(transport, config.mail.from, templates, options.registry.model.app.name, to),
  };
  await bootstrapAdmin(auth, env);
  await ensureEventSequence(store);
  // Repositories handed to hooks write in the hook's transaction; those of jobs and afterCommit
  // hooks start their own. Either way their writes run the entity's hooks and reach the event log.
  ctx.repositoriesFor = (scope) =>
    options.repositories?.(
      scope.ctx.store,
      repositoryWriter(() => scope),
    );
  const systemRepositories = () =>
    options.repositories?.(
      store,
      repositoryWriter(() => ({ ctx, caller: SYSTEM_CALLER, now: ctx.now(), depth: 0, path: [] })),
    );
  // ioredis loads only when REDIS_URL asks for it.
  const redis = env.REDIS_URL
    ? new (await import('ioredis')).Redis(env.REDIS_URL, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: false,
      })
    : undefined;
  redis?.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  // ENTIGEN_REDIS_PREFIX separates apps (or test runs) that share one Redis.
  const prefix = env.ENTIGEN_REDIS_PREFIX ?? 'entigen';
  const limiter: LimiterStore = redis ? trackedLimiter(redisLimiterStore(redis, `${prefix}:rl`)) : memoryLimiterStore();
  const services: Record<string, () => Promise<void>> = redis ? { redis: async () => void (await redis.ping()) } : {};
  // Without Redis, instances on one PostgreSQL database hear each other through LISTEN/NOTIFY.
  const { maxStalenessMs } = config.cluster;
  const bus: Bus | undefined = redis
    ? await RedisBus.connect(redis, prefix, logger, maxStalenessMs)
    : opened.kind === 'postgres'
      ? await (await import('../cluster/pgBus.js')).PgBus.connect(opened as PgStore, prefix, logger, maxStalenessMs)
      : undefined;
  if (countCache) {
    operator.watch('entigen_read_cache_hits', 'Counts and session callers answered from memory', () => countCache.hits);
    operator.watch(
      'entigen_read_cache_misses',
      'Counts and session callers read from the store',
      () => countCache.misses,
    );
  }
  if (bus) operator.watchCluster(() => bus.state());
  // While the bus cannot prove that every notice arrived, nothing cached outlives the bound.
  if (countCache && bus) countCache.trust = bus;

  const dispatcher = new HookDispatcher(ctx, {
    ...config.hooks,
    repositories: systemRepositories,
    callerOf: (userId) => callerOfChange(store, auth.roles, userId),
  });
  // One reader of the event log for realtime streams; other instances' commits arrive through
  // Redis when it is configured, and by polling the log either way.
  const feed = new LogFeed({
    store,
    logger,
    pollMs: config.realtime.pollMs,
    publish: bus ? (seq) => bus.publish('events', String(seq)) : undefined,
  });
  await feed.start();
  const realtime = new RealtimeHub(feed, config.realtime, logger);
  realtime.start();
  const webhooks = new WebhookDispatcher(ctx, config.webhooks, feed);
  ctx.notifyCommitted = () => {
    dispatcher.notify();
    feed.notify();
  };
  ctx.notifyCredentialsChanged = () => {
    realtime.recheckAll();
    bus?.publish('credentials');
  };
  await dispatcher.start();
  webhooks.start();
  outbox.start();
  if (bus) {
    await bus.on('events', (seq) => feed.heard(Number(seq)));
    await bus.on('credentials', () => realtime.recheckAll());
    await bus.on('roles', () => auth.roles.invalidate(false));
    if (countCache) {
      countCache.onInvalidate = (collection) => bus.publish('counts', collection);
      await bus.on('counts', (collection) => countCache.invalidate(collection, true));
    }
    auth.roles.onChange = () => bus.publish('roles');
    auth.roles.trust = bus;
    bus.onResume = () => {
      countCache?.clear();
      auth.roles.invalidate(false);
      realtime.recheckAll();
      feed.notify();
    };
    await bus.start();
  }
  // A stream holds a credential: while the bus cannot vouch for notices, streams are checked at the bound.
  const streamCheck = bus
    ? setInterval(() => {
        if (!bus.trusted) realtime.recheckAll();
      }, maxStalenessMs)
    : undefined;
  streamCheck?.unref();
  const drain: DrainState = { draining: false };
  const scheduler = new Scheduler({
    ctx,
    handlers: options.handlers ?? {},
    repositories: systemRepositories(),
    maxSeriesPerJob: config.jobs.maxSeriesPerJob,
    onRunFinished: (handler, status) => operator.jobRun(handler, status),
  });
  const uploads = { dir: resolve(options.root, config.uploads.dir), maxBytes: config.uploads.maxBytes };
  const { app, routes, listener } = createApp({
    auth,
    setup: new SetupState(store),
    limiter,
    metrics,
    drain,
    services,
    scheduler,
    uploads,
    operator,
    realtime,
    webhooks,
    counts: countCache,
    cluster: bus ? () => bus.state() : undefined,
  });

  /** The log keeps what afterCommit hooks and enabled webhooks have not settled, whatever its age. */
  const pruneLog = async () => {
    const before = new Date(ctx.now().getTime() - config.events.retentionMs);
    const delivered = await webhooks.deliveredUpTo(await dispatcher.deliveredUpTo());
    return pruneEvents(store, before, delivered, config.events.maxCount);
  };
  const sweeper = setInterval(() => {
    sweepIdempotencyRecords(store, ctx.now().getTime()).catch((error) =>
      logger.warn({ err: error }, 'idempotency sweep failed'),
    );
    pruneLog().catch((error) => logger.warn({ err: error }, 'event log prune failed'));
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  if (options.schedule !== false && env.ENTIGEN_SCHEDULER !== 'off') scheduler.start();

  const handler: RequestHandler = (req, res, next) => {
    // Mounted at /api, the host has already cut /api from req.url: entigen's paths are whole again.
    const path = `${req.baseUrl}${req.url}`;
    if (!ENTIGEN_PATHS.test(path)) return next();
    req.url = path;
    req.baseUrl = '';
    app(req, res);
  };
  let closing: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  const stopWork = () => {
    stopping ??= (async () => {
      clearInterval(sweeper);
      clearInterval(streamCheck);
      // Streams end first: their clients reconnect (elsewhere) with Last-Event-ID.
      realtime.closeAll();
      feed.stop();
      await scheduler.stop(config.server.shutdownGraceMs);
      await Promise.all([dispatcher.stop(), webhooks.stop(), outbox.stop()]);
    })();
    return stopping;
  };
  return {
    app,
    handler,
    ctx,
    config,
    auth,
    routes,
    listener,
    scheduler,
    dispatcher,
    realtime,
    feed,
    webhooks,
    pruneLog,
    drain,
    redis: Boolean(redis),
    stopWork,
    close() {
      closing ??= (async () => {
        drain.draining = true;
        await stopWork();
        await store.close();
        await bus?.close();
        await redis?.quit().catch(() => undefined);
      })();
      return closing;
    },
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

function trackedLimiter(store: LimiterStore): LimiterStore {
  return { hit: (...args) => metrics.track('redis', () => store.hit(...args)) };
}

/** ENTIGEN_ADMIN_EMAIL and ENTIGEN_ADMIN_PASSWORD create the first admin headless, once. */
async function bootstrapAdmin(auth: AuthContext, env: NodeJS.ProcessEnv): Promise<void> {
  if (!env.ENTIGEN_ADMIN_EMAIL || !env.ENTIGEN_ADMIN_PASSWORD || (await hasAdmin(auth.ctx.store))) return;
  await createFirstAdmin(auth.ctx, auth.config.passwordPolicy, {
    email: env.ENTIGEN_ADMIN_EMAIL,
    password: env.ENTIGEN_ADMIN_PASSWORD,
    name: env.ENTIGEN_ADMIN_NAME ?? 'Administrator',
    tenantName: env.ENTIGEN_ADMIN_TENANT ?? 'Default',
  });
  auth.ctx.logger.info({ email: env.ENTIGEN_ADMIN_EMAIL }, 'created the first administrator from ENTIGEN_ADMIN_EMAIL');
}
