import type { Redis } from 'ioredis';
import type { Bus } from '../../cluster/bus.js';
import { JointBus } from '../../cluster/jointBus.js';
import { RedisBus } from '../../cluster/redisBus.js';
import { metrics } from '../../health/metrics.js';
import { type LimiterStore, memoryLimiterStore, redisLimiterStore } from '../../http/rateLimit/limiterStore.js';
import type { MongoStore } from '../../store/mongo/mongoStore.js';
import { CHANGED_TOPIC } from '../../store/postgres/changeNotices.js';
import type { PgStore } from '../../store/postgres/pgStore.js';
import type { Base } from './base.js';
import type { Stores } from './store.js';

export interface Cluster {
  redis?: Redis;
  /** The rate limiter's counters: in Redis when there is one, so every instance counts alike. */
  limiter: LimiterStore;
  /** Extra services for the health report (Redis). */
  services: Record<string, () => Promise<void>>;
  /** The bus between instances: Redis, else LISTEN/NOTIFY on PostgreSQL; none for one SQLite or MongoDB process. */
  bus?: Bus;
}

/** Redis (when REDIS_URL names one) and the bus between instances. */
export async function withCluster(
  { env, logger, config, operator }: Base,
  { opened, countCache, changeStreams }: Stores,
): Promise<Cluster> {
  // ioredis loads only when REDIS_URL asks for it.
  const redis = env.REDIS_URL
    ? new (await import('ioredis')).Redis(env.REDIS_URL, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: false,
      })
    : undefined;
  // An outage is told once, by its message (ioredis retries and reports each attempt), until Redis answers again.
  let told = false;
  redis?.on('ready', () => {
    told = false;
  });
  redis?.on('error', (error: Error) => {
    if (told) return;
    told = true;
    logger.warn({ error: error.message }, 'redis error: retrying');
  });
  // The first requests count in Redis, not in the fallback with an outage's warning: the server
  // listens once the connection is up, or has failed (an outage, told above), or after a bound.
  if (redis) await connected(redis, REDIS_START_WAIT_MS);
  // ENTIGEN_REDIS_PREFIX separates apps (or test runs) that share one Redis.
  const prefix = env.ENTIGEN_REDIS_PREFIX ?? 'entigen';
  const limiter: LimiterStore = redis ? trackedLimiter(redisLimiterStore(redis, `${prefix}:rl`)) : memoryLimiterStore();
  const services: Record<string, () => Promise<void>> = redis ? { redis: async () => void (await redis.ping()) } : {};
  // Without Redis, instances on one PostgreSQL database hear each other through LISTEN/NOTIFY; on
  // PostgreSQL they hear there, either way, what other connections write (the change triggers).
  const { maxStalenessMs } = config.cluster;
  const changes =
    opened.kind === 'postgres'
      ? await (await import('../../cluster/pgBus.js')).PgBus.connect(
          opened as PgStore,
          prefix,
          logger,
          maxStalenessMs,
          {
            changesOnly: Boolean(redis),
          },
        )
      : undefined;
  // On MongoDB a change stream hears every writer, where the deployment has them (and caches are on only then).
  const mongoChanges =
    countCache && changeStreams
      ? new (await import('../../cluster/mongoChangeBus.js')).MongoChangeBus(
          opened as MongoStore,
          logger,
          maxStalenessMs,
        )
      : undefined;
  const notices = redis ? await RedisBus.connect(redis, prefix, logger, maxStalenessMs) : undefined;
  const heard = changes ?? mongoChanges;
  const bus: Bus | undefined =
    notices && heard ? new JointBus(notices, heard, new Set([CHANGED_TOPIC])) : (notices ?? heard);
  if (bus) operator.watchCluster(() => bus.state());
  // While the bus cannot prove that every notice arrived, nothing cached outlives the bound.
  if (countCache && bus) countCache.trust = bus;
  return { redis, limiter, services, bus };
}

/** How long a start waits for Redis to answer before it serves without it (the fallback counts meanwhile). */
const REDIS_START_WAIT_MS = 5_000;

/** Resolves once `redis` is ready, fails to connect, or `boundMs` passed; never rejects. */
function connected(redis: Redis, boundMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      redis.off('end', done);
      resolve();
    };
    const timer = setTimeout(done, boundMs);
    timer.unref();
    redis.once('ready', done);
    redis.once('error', done);
    redis.once('end', done);
  });
}

function trackedLimiter(store: LimiterStore): LimiterStore {
  return { hit: (...args) => metrics.track('redis', () => store.hit(...args)) };
}
