import { randomUUID } from 'node:crypto';
import { ADMIN_ENV, type SpawnedServer, spawnServer } from './spawnServer.js';

/** Limits high enough that a test's own traffic never meets them (tests of the limits set their own). */
export const CLUSTER_LIMITS = {
  RATE_LIMIT_AUTH: '10000/60',
  RATE_LIMIT_API: '100000/60',
  RATE_LIMIT_PUBLIC: '100000/60',
};

/** Instances of the example app as real `entigen serve` processes on one PostgreSQL schema and one Redis. */
export interface Cluster {
  instances: SpawnedServer[];
  env: Record<string, string>;
  /** One more instance with the same settings. */
  add(extra?: Record<string, string>): Promise<SpawnedServer>;
  stop(): void;
}

export async function startCluster(
  size: number,
  redisUrl: string,
  extra: Record<string, string> = {},
): Promise<Cluster> {
  const env = {
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=cluster_${randomUUID().replace(/-/g, '')}`,
    REDIS_URL: redisUrl,
    ENTIGEN_REDIS_PREFIX: `cluster-${randomUUID()}`,
    ...CLUSTER_LIMITS,
    ...extra,
  };
  const instances: SpawnedServer[] = [];
  const cluster: Cluster = {
    instances,
    env,
    async add(more = {}) {
      const instance = await spawnServer({ ...env, ...more });
      instances.push(instance);
      return instance;
    },
    stop() {
      for (const instance of instances) instance.child.kill('SIGKILL');
    },
  };
  // The first creates the schema and the administrator; the others start beside each other.
  await cluster.add();
  await Promise.all(Array.from({ length: size - 1 }, () => cluster.add()));
  return cluster;
}

export interface CallResult {
  status: number;
  body: any;
}

/** A JSON call to one instance. */
export async function call(
  instance: SpawnedServer,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  const res = await fetch(`${instance.url}${path}`, {
    method,
    headers: {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: kept as text.
  }
  return { status: res.status, body: parsed };
}

/** Signs in with a password on `instance`; the session token. */
export async function signIn(instance: SpawnedServer, email: string, password: string): Promise<string> {
  const { status, body } = await call(instance, 'POST', '/api/v1/auth/login', undefined, { email, password });
  if (status !== 200) throw new Error(`sign-in of ${email} answered ${status}: ${JSON.stringify(body)}`);
  return body.token;
}

export const adminSignIn = (instance: SpawnedServer) =>
  signIn(instance, ADMIN_ENV.ENTIGEN_ADMIN_EMAIL, ADMIN_ENV.ENTIGEN_ADMIN_PASSWORD);

/**
 * Polls `read` every 20 ms until `done` holds; the milliseconds it took. Throws after `timeoutMs`
 * with the last value, so a test reports what it saw.
 */
export async function within<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5000,
): Promise<number> {
  const started = performance.now();
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (done(last)) return Math.round(performance.now() - started);
    if (performance.now() - started > timeoutMs) throw new Error(`still ${JSON.stringify(last)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
