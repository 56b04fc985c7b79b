import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { registry, repositories } from '../../generated/index.js';
import { signSession } from '../../runtime/auth/sessionToken.js';
import { type RunningServer, type StartOptions, startServer } from '../../runtime/server/startServer.js';
import { MongoStore } from '../../runtime/store/mongo/mongoStore.js';
import { newId } from '../../runtime/write/prepareWrite.js';
import { repoRoot } from './cli.js';
import { fakeMongoClient } from './fakeMongo.js';
import { checkResponse } from './openApiCheck.js';

export interface TestServer extends RunningServer {
  /** Creates a user directly in the store and returns a session token for it. */
  user(options?: { roles?: string[]; displayName?: string; email?: string }): Promise<{ id: string; token: string }>;
  /** fetch against the server with JSON in and out. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<TestResponse>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** TEST_STORE=postgres runs the suite on PostgreSQL (a fresh schema per server), else on SQLite. */
export function testDatabaseUrl(dir: string): string {
  if (process.env.TEST_STORE === 'postgres') {
    const base = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    return `${base}?schema=t_${randomUUID().replace(/-/g, '')}`;
  }
  return `sqlite:${join(dir, 'test.db')}`;
}

/**
 * Drops a schema `testDatabaseUrl` made, once its server closed: a PostgreSQL run starts hundreds
 * of servers, and a database holding every one's tables makes each catalog query slower.
 */
async function dropOwnSchema(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema');
  if (!schema || !/^t_[0-9a-f]{32}$/.test(schema)) return;
  url.search = '';
  const client = new pg.Client({ connectionString: url.toString() });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } catch {
    // Left behind: it costs the next runs a little, and nothing else.
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The example app on a real port over a fresh database; with an admin unless `withAdmin` is false. */
export const GENEROUS_LIMITS = {
  auth: { limit: 1_000_000, window: 60 },
  api: { limit: 1_000_000, window: 60 },
  public: { limit: 1_000_000, window: 60 },
  mcp: { limit: 1_000_000, window: 60 },
};

export async function startTestServer(
  env: Record<string, string> = {},
  {
    withAdmin = true,
    overrides = { rateLimit: GENEROUS_LIMITS },
    now,
    handlers,
    registry: app = registry,
    logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    store,
  }: {
    /** A logger of the test's own (to read what the server logs). */
    logger?: StartOptions['logger'];
    withAdmin?: boolean;
    overrides?: StartOptions['overrides'];
    now?: () => Date;
    handlers?: StartOptions['handlers'];
    registry?: StartOptions['registry'];
    /** A store opened by the test (another writer shares its database). */
    store?: StartOptions['store'];
  } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'entigen-server-'));
  // A database the test named is the test's; one made here goes with the server.
  const ownDatabase = env.DATABASE_URL === undefined && !store ? testDatabaseUrl(dir) : undefined;
  const running = await startServer({
    registry: app,
    root: repoRoot,
    port: 0,
    host: '127.0.0.1',
    logger,
    overrides,
    now,
    handlers,
    schedule: false,
    repositories,
    // TEST_STORE=mongo-fake: the MongoDB adapter over the in-memory driver stand-in (unless the test names its own database).
    store:
      store ??
      (process.env.TEST_STORE === 'mongo-fake' && !env.DATABASE_URL
        ? MongoStore.withClient(fakeMongoClient(), 'test')
        : undefined),
    env: {
      DATABASE_URL: ownDatabase ?? testDatabaseUrl(dir),
      SESSION_SECRET: 'test-session-secret',
      APP_ENCRYPTION_KEY: 'test-encryption-key',
      // HTTP_ADAPTER=node runs the suite on the node:http adapter (npm run test:node-adapter).
      ...(process.env.HTTP_ADAPTER ? { HTTP_ADAPTER: process.env.HTTP_ADAPTER } : {}),
      ...env,
    },
  });
  let users = 0;
  const server: TestServer = {
    ...running,
    // The database folder goes with the server: a suite starts hundreds of them.
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
      if (ownDatabase?.startsWith('postgres')) await dropOwnSchema(ownDatabase);
    },
    async user(options = {}) {
      const id = newId();
      users++;
      const now = new Date().toISOString();
      await running.ctx.store.insert('users', {
        id,
        email: options.email ?? `user${users}-${id.slice(-6)}@example.test`,
        displayName: options.displayName ?? `User ${users}`,
        roles: options.roles ?? ['USER'],
        authSource: 'local',
        disabled: false,
        createdAt: now,
        updatedAt: now,
      });
      return { id, token: signSession('test-session-secret', id, running.ctx.now().getTime()) };
    },
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined;
      if (options.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      }
      const response = await fetch(`${running.url}${path}`, { method, headers, body, redirect: 'manual' });
      // An event stream does not end by itself: its headers are the answer here (test/support/sse.ts reads streams).
      const streaming = response.headers.get('content-type')?.startsWith('text/event-stream');
      if (streaming) await response.body?.cancel();
      const text = streaming ? '' : await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // Not JSON: the test sees the text.
      }
      // Every response the integration suite sees must match generated/openapi.json.
      const problems = checkResponse(method, path, response.status, response.headers.get('content-type'), parsed);
      if (problems.length > 0) throw new Error(`response does not match the OpenAPI document: ${problems.join('; ')}`);
      return { status: response.status, headers: response.headers, body: parsed };
    },
  };
  if (withAdmin) await server.user({ roles: ['ADMIN'], displayName: 'Root', email: 'root@example.test' });
  return server;
}
