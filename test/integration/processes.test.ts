import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath, repoRoot } from '../support/cli.js';
import { startPrivateRedis } from '../support/privateRedis.js';
import { ADMIN_ENV, adminToken, type SpawnedServer, spawnServer } from '../support/spawnServer.js';

const running: SpawnedServer[] = [];
afterEach(({ task }) => {
  // A failed or timed-out test shows what its servers logged, the way to tell a slow start from a stuck one.
  if (task.result?.state === 'fail')
    for (const [i, s] of running.entries()) console.error(`server ${i} at ${s.url}:\n${s.output().slice(-4000)}`);
  for (const s of running.splice(0)) s.child.kill('SIGKILL');
});
const start = async (env: Record<string, string>) => {
  const server = await spawnServer(env);
  running.push(server);
  return server;
};
/** One Redis command over the wire protocol, its reply as text. */
function redisCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => socket.write(`${command}\r\n`));
    let reply = '';
    socket.on('data', (data) => {
      reply += data.toString();
      socket.end();
    });
    socket.on('end', () => resolve(reply));
    socket.on('error', reject);
  });
}
const tempDb = () => join(mkdtempSync(join(tmpdir(), 'entigen-proc-')), 'app.db');

describe('server processes', () => {
  it('share one rate-limit window through Redis', async () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6379', ENTIGEN_REDIS_PREFIX: `test-${randomUUID()}` };
    const a = await start({ ...env, DATABASE_URL: `sqlite:${tempDb()}` });
    const b = await start({ ...env, DATABASE_URL: `sqlite:${tempDb()}` });
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++)
      statuses.push((await fetch(`${(i % 2 ? a : b).url}/api/v1/schema/metadata/list`)).status);
    const admitted = statuses.filter((s) => s === 200).length;
    expect(admitted).toBeLessThanOrEqual(60);
    expect(admitted).toBeGreaterThanOrEqual(50);
    expect(statuses.filter((s, i) => s === 429 && i % 2 === 0).length).toBeGreaterThan(0);
    expect(statuses.filter((s, i) => s === 429 && i % 2 === 1).length).toBeGreaterThan(0);
  });

  it('starts quietly on SQLite with Redis, and tells a Redis outage once, by its message', async () => {
    const redis = await startPrivateRedis();
    try {
      const server = await start({ REDIS_URL: redis.url, DATABASE_URL: `sqlite:${tempDb()}` });
      const token = await adminToken(server.url);
      // A write publishes a notice to the other instances.
      const made = await fetch(`${server.url}/api/v1/articles`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ title: 'Quiet', body: 'a start without warnings' }),
      });
      expect(made.status).toBe(201);
      await new Promise((r) => setTimeout(r, 300));
      const lines = () =>
        server
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(lines().filter((line) => line.level >= 40)).toEqual([]);
      expect(server.output()).not.toContain('"stack"');

      // Redis goes away: each connection says so once while ioredis retries, with no stack.
      await redis.stop();
      for (let i = 0; i < 5; i++) {
        await fetch(`${server.url}/api/v1/articles`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ title: `During ${i}`, body: 'written while Redis is down' }),
        });
        await new Promise((r) => setTimeout(r, 300));
      }
      const told = lines().filter((line) => line.level >= 40);
      expect(told.length).toBeGreaterThan(0);
      expect(told.length).toBeLessThanOrEqual(3);
      expect(server.output()).not.toContain('"stack"');
    } finally {
      await redis.stop();
    }
  }, 60_000);

  it('waits at start for a Redis slow to answer, so the first requests count in Redis', async () => {
    const redis = await startPrivateRedis();
    // A front for Redis that holds its first connection (the server's counters) for two seconds.
    let accepted = 0;
    const front = createServer((client) => {
      const delay = accepted++ === 0 ? 2_000 : 0;
      setTimeout(() => {
        const upstream = createConnection({ host: '127.0.0.1', port: redis.port });
        client.pipe(upstream).pipe(client);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      }, delay);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const prefix = `slow-${randomUUID()}`;
    try {
      const { port } = front.address() as AddressInfo;
      const server = await start({
        REDIS_URL: `redis://127.0.0.1:${port}`,
        ENTIGEN_REDIS_PREFIX: prefix,
        DATABASE_URL: `sqlite:${tempDb()}`,
      });
      expect((await fetch(`${server.url}/api/v1/schema/metadata/list`)).status).toBe(200);
      const warnings = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((line) => line.level >= 40);
      expect(warnings).toEqual([]);
      // The request was counted in Redis, where every instance sees it.
      const keys = await redisCommand(redis.port, `KEYS ${prefix}:rl*`);
      expect(keys).toContain(`${prefix}:rl`);
    } finally {
      for (const s of running.splice(0)) s.child.kill('SIGKILL');
      await new Promise((resolve) => front.close(resolve));
      await redis.stop();
    }
  }, 60_000);

  it('finishes a slow request in flight on SIGTERM, refuses new ones, and exits 0', async () => {
    const server = await start({ DATABASE_URL: `sqlite:${tempDb()}` });
    const token = await adminToken(server.url);
    const body = JSON.stringify({ title: 'Slow', body: 'arrives in two parts' });
    const { port } = new URL(server.url);
    // The request's body arrives in two parts, so the request is in flight when SIGTERM lands.
    const slow = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/articles',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization: `Bearer ${token}`,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => req.end(body.slice(10)), 700);
    });
    await new Promise((r) => setTimeout(r, 200));
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const late = await fetch(`${server.url}/api/v1/articles`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);
    const answer = await slow;
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body).data.title).toBe('Slow');
    expect(await server.exited).toBe(0);
  });

  it('stops with the npx process a supervisor started and signals, leaving no server behind', async () => {
    // npx finds entigen where an app has it installed (a project beside, linking this checkout):
    // run in the checkout itself, it would link the checkout into its own cache and run its
    // prepare, which rebuilds dist/ under the other tests.
    const installed = mkdtempSync(join(tmpdir(), 'entigen-npx-'));
    mkdirSync(join(installed, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(repoRoot, join(installed, 'node_modules', 'entigen'));
    symlinkSync(join('..', 'entigen', 'dist', 'bin', 'entigen.js'), join(installed, 'node_modules', '.bin', 'entigen'));
    writeFileSync(join(installed, 'package.json'), '{"name":"supervised","private":true}');
    const npxArgs = ['--no-install', '--prefix', installed, 'entigen', 'serve', '--port', '0', '--host', '127.0.0.1'];
    const child = spawn('npx', npxArgs, {
      cwd: repoRoot,
      env: { ...process.env, ...ADMIN_ENV, SESSION_SECRET: 'npx-test', DATABASE_URL: `sqlite:${tempDb()}` },
    });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npx entigen serve did not start:\n${output}`)), 30_000);
      const onData = (chunk: Buffer) => {
        output += chunk;
        const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
    });
    expect((await fetch(`${url}/api/health`)).status).toBe(200);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // What systemd, Docker or a process manager does: SIGTERM to the process it started, npx.
    child.kill('SIGTERM');
    await exited;
    const started = Date.now();
    let answering = true;
    while (answering && Date.now() - started < 10_000) {
      answering = await fetch(`${url}/api/health`).then(
        () => true,
        () => false,
      );
      if (answering) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answering).toBe(false);
  });

  it.each([
    ['stops reading its stdout (a stalled log shipper)', 'stall'],
    ['closes its stdout (a log shipper that died)', 'close'],
  ])('serves and stops on SIGTERM when the reader %s', async (_name, fault) => {
    const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--host', '127.0.0.1'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        ...ADMIN_ENV,
        SESSION_SECRET: 'log-test',
        RATE_LIMIT_PUBLIC: '100000/60',
        LOG_FORMAT: 'json',
        DATABASE_URL: `sqlite:${tempDb()}`,
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let output = '';
    const url = await new Promise<string>((resolve) => {
      const onData = (chunk: Buffer) => {
        output += chunk;
        const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
        if (!match) return;
        child.stdout.off('data', onData);
        if (fault === 'stall') child.stdout.pause();
        else child.stdout.destroy();
        resolve(match[1]);
      };
      child.stdout.on('data', onData);
    });
    try {
      // Far more log lines than a pipe holds (64 kB): every request is still answered.
      let answered = 0;
      for (let round = 0; round < 50; round++) {
        const statuses = await Promise.all(
          Array.from({ length: 20 }, () => fetch(`${url}/api/v1/articles?limit=1`).then((r) => r.status)),
        );
        answered += statuses.filter((status) => status === 200).length;
      }
      expect(answered).toBe(1000);
      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 8000))]);
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('keeps every write that got a 2xx through kill -9', async () => {
    const db = tempDb();
    const first = await start({ DATABASE_URL: `sqlite:${db}` });
    const token = await adminToken(first.url);
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await fetch(`${first.url}/api/v1/articles`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ title: `Durable ${i}`, body: 'b' }),
        });
        if (res.status === 201) ids.push(((await res.json()) as { data: { id: string } }).data.id);
      }),
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await start({ DATABASE_URL: `sqlite:${db}` });
    const token2 = await adminToken(second.url);
    const res = await fetch(`${second.url}/api/v1/articles?limit=200&select=title`, {
      headers: { authorization: `Bearer ${token2}` },
    });
    const found = ((await res.json()) as { data: { items: { id: string }[] } }).data.items.map((i) => i.id);
    expect(ids.length).toBe(40);
    expect(found).toEqual(expect.arrayContaining(ids));
  });

  it('logs JSON lines that carry the correlation id', async () => {
    const server = await start({ DATABASE_URL: `sqlite:${tempDb()}` });
    await fetch(`${server.url}/api/v1/articles/${'0'.repeat(24)}`, { headers: { 'x-correlation-id': 'trace-me-123' } });
    await fetch(`${server.url}/api/v1/articles?limit=1`, { headers: { 'x-correlation-id': 'trace-me-124' } });
    await new Promise((r) => setTimeout(r, 100));
    const lines = server
      .output()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const mine = lines.filter((line) => line.correlationId === 'trace-me-123');
    expect(mine).toContainEqual(
      expect.objectContaining({ msg: 'request', status: 404, path: `/api/v1/articles/${'0'.repeat(24)}` }),
    );
    // The full path, also for answers given inside a mounted router; never the query string.
    expect(lines.filter((line) => line.correlationId === 'trace-me-124')).toContainEqual(
      expect.objectContaining({ msg: 'request', status: 200, path: '/api/v1/articles' }),
    );
  });
});

describe.each([
  ['one SQLite file', () => `sqlite:${tempDb()}`],
  [
    'one PostgreSQL database',
    () => `postgres://postgres@127.0.0.1:5432/test?schema=jobs_${randomUUID().replace(/-/g, '')}`,
  ],
])('scheduled jobs across processes on %s', (_name, databaseUrl) => {
  it('runs a 1 s interval job once per interval with two servers sharing the database', async () => {
    const database = databaseUrl();
    const a = await start({ DATABASE_URL: database });
    const token = await adminToken(a.url);
    const b = await start({ DATABASE_URL: database });
    const created = await fetch(`${a.url}/api/v1/scheduledJobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'Heartbeat', handler: 'heartbeat', scheduleType: 'interval', schedules: ['1s'] }),
    });
    const { id } = ((await created.json()) as { data: { id: string } }).data;
    await new Promise((r) => setTimeout(r, 10_000));
    const res = await fetch(`${b.url}/api/v1/jobExecutions?jobId=${id}&limit=200&sort=startedAt`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const runs = ((await res.json()) as { data: { items: { startedAt: string; status: string }[] } }).data.items;
    expect(runs.length).toBeGreaterThanOrEqual(7);
    expect(runs.length).toBeLessThanOrEqual(11);
    // Every run completed, but the newest may still be running when the list is read.
    const statuses = runs.map((run) => run.status);
    expect(statuses.slice(0, -1).filter((status) => status !== 'completed')).toEqual([]);
    expect(['completed', 'running']).toContain(statuses.at(-1));
    // Once per interval: claims are at least an interval apart (compare-and-set on nextRunAt), and
    // the count above would double if both servers ran each one. startedAt is stamped after the
    // claim's round trips, which a loaded machine stretches by a few hundred milliseconds.
    const gaps = runs.slice(1).map((run, i) => Date.parse(run.startedAt) - Date.parse(runs[i].startedAt));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(500);
  }, 60_000);
});

describe('three instances on one PostgreSQL and one Redis', () => {
  it('share rate limits, idempotency records and role changes', async () => {
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=many_${randomUUID().replace(/-/g, '')}`,
      REDIS_URL: 'redis://127.0.0.1:6379',
      ENTIGEN_REDIS_PREFIX: `many-${randomUUID()}`,
    };
    const first = await start(env);
    const [second, third] = await Promise.all([start(env), start(env)]);
    const servers = [first, second, third];
    const admin = await adminToken(first.url);
    const call = (
      server: SpawnedServer,
      method: string,
      path: string,
      token?: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: {
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
        body: body ? JSON.stringify(body) : undefined,
      });

    // One idempotency key sent to two instances: one record.
    const order = { title: 'Once across instances', body: 'b' };
    const [a, b] = await Promise.all([
      call(first, 'POST', '/api/v1/articles', admin, order, { 'Idempotency-Key': 'multi-1' }),
      call(second, 'POST', '/api/v1/articles', admin, order, { 'Idempotency-Key': 'multi-1' }),
    ]);
    expect([a.status, b.status].sort()).toEqual(a.status === b.status ? [201, 201] : [201, 409]);
    const listed = await (await call(third, 'GET', '/api/v1/articles?q=instances', admin)).json();
    expect((listed as { data: { totalCount: number } }).data.totalCount).toBe(1);

    // A role change on one instance takes effect on the others at once.
    await call(first, 'POST', '/api/v1/roles', admin, {
      key: 'AUDITOR',
      label: 'Auditor',
      permissions: ['articles:view'],
    });
    const registered = await call(first, 'POST', '/api/v1/auth/register', undefined, {
      email: 'aud@example.test',
      password: 'correct horse battery staple!',
      displayName: 'Aud',
    });
    const auditor = (await registered.json()) as { user: { id: string }; token: string };
    await call(first, 'PUT', `/api/v1/users/${auditor.user.id}`, admin, { roles: ['AUDITOR'] });
    expect((await call(second, 'GET', '/api/v1/scheduledJobs', auditor.token)).status).toBe(403);
    expect((await call(third, 'GET', '/api/v1/articles', auditor.token)).status).toBe(200);
    await call(second, 'PUT', '/api/v1/roles/AUDITOR', admin, { permissions: ['articles:view', 'scheduledJobs:view'] });
    await new Promise((r) => setTimeout(r, 300));
    expect((await call(third, 'GET', '/api/v1/scheduledJobs', auditor.token)).status).toBe(200);
    expect((await call(first, 'GET', '/api/v1/scheduledJobs', auditor.token)).status).toBe(200);

    // The public window is shared by all three (60 a minute per address).
    const statuses: number[] = [];
    for (let i = 0; i < 66; i++)
      statuses.push((await fetch(`${servers[i % 3].url}/api/v1/schema/metadata/list`)).status);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(60);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(6);
  }, 60_000);
});

describe('two instances on one PostgreSQL without Redis', () => {
  /** Retries `read` until it gives `expected` (a notice takes milliseconds), at most 3 s. */
  const eventually = async <T>(read: () => Promise<T>, expected: T) => {
    let last: T | undefined;
    for (let i = 0; i < 60; i++) {
      last = await read();
      if (last === expected) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    return last;
  };

  it('hear each other through LISTEN/NOTIFY: cached counts, ended sessions, and a lost listener', async () => {
    const schema = `notices_${randomUUID().replace(/-/g, '')}`;
    const env = { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=${schema}` };
    const a = await start(env);
    const b = await start(env);
    const admin = await adminToken(a.url);
    const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
    const total = async () => {
      const answer = await fetch(`${b.url}/api/v1/articles?kind=news`, { headers });
      return ((await answer.json()) as { data: { totalCount: number } }).data.totalCount;
    };
    const create = (server: SpawnedServer) =>
      fetch(`${server.url}/api/v1/articles`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: 'Heard', body: 'b', kind: 'news' }),
      });
    const hits = async () => {
      const text = await (await fetch(`${b.url}/api/metrics`, { headers })).text();
      return Number(/^entigen_read_cache_hits (\d+)/m.exec(text)?.[1]);
    };
    // B counts (and remembers: the second count is a hit), A writes: B's next count is the new one once A's notice lands.
    expect(await total()).toBe(0);
    const before = await hits();
    expect(await total()).toBe(0);
    expect(await hits()).toBeGreaterThan(before);
    expect((await create(a)).status).toBe(201);
    expect(await eventually(total, 1)).toBe(1);

    // A session B has used and remembered ends on A: B refuses it.
    const registered = (await (
      await fetch(`${a.url}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'n@example.test', password: 'correct horse battery staple!', displayName: 'N' }),
      })
    ).json()) as { token: string };
    const me = async () =>
      (await fetch(`${b.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${registered.token}` } })).status;
    expect(await me()).toBe(200);
    expect(await me()).toBe(200);
    const out = await fetch(`${a.url}/api/v1/auth/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${registered.token}` },
    });
    expect(out.status).toBe(200);
    expect(await eventually(me, 401)).toBe(401);

    // B's listening connection is cut: until it listens again, B trusts nothing it cached.
    const pg = (await import('pg')).default;
    const admin2 = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
    await admin2.connect();
    const { rowCount } = await admin2.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN "entigen:${schema}"%'`,
    );
    await admin2.end();
    expect(rowCount).toBe(2);
    await new Promise((r) => setTimeout(r, 100));
    expect((await create(a)).status).toBe(201);
    expect(await total()).toBe(2);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await create(a)).status).toBe(201);
    expect(await eventually(total, 3)).toBe(3);

    // On the way down, what the server publishes still leaves before its connections close.
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(a.output()).not.toContain('cannot publish a notice');
  }, 60_000);
});
