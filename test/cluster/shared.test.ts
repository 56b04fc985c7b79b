import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/cluster.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { adminToken, type SpawnedServer, spawnChildServer, spawnServer } from '../support/spawnServer.js';
import { openSse } from '../support/sse.js';

// Three instances of one app on one PostgreSQL schema and a Redis of the test's own: what they
// must share (realtime events, rate-limit windows, the scheduler's due runs).

let redis: PrivateRedis;
const running: SpawnedServer[] = [];
beforeAll(async () => {
  redis = await startPrivateRedis();
});
afterAll(async () => {
  for (const s of running.splice(0)) s.child.kill('SIGKILL');
  await redis?.stop();
});

const environment = (name: string) => ({
  DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=${name}_${randomUUID().replace(/-/g, '')}`,
  REDIS_URL: redis.url,
  ENTIGEN_REDIS_PREFIX: `${name}-${randomUUID()}`,
});

async function three(start: (env: Record<string, string>) => Promise<SpawnedServer>, env: Record<string, string>) {
  const first = await start(env);
  running.push(first);
  const rest = await Promise.all([start(env), start(env)]);
  running.push(...rest);
  return [first, ...rest];
}

describe('three instances share', () => {
  it('realtime: every write reaches the subscribers of every instance, once each, in log order', async () => {
    // These instances poll the log once a minute: what arrives within seconds came over the bus.
    const instances = await three(spawnChildServer, environment('sse'));
    const token = await adminToken(instances[0].url);
    const streams = await Promise.all(
      instances.map((instance) => openSse(`${instance.url}/api/v1/realtime?entities=articles`, { token })),
    );
    for (const stream of streams) expect(stream.status).toBe(200);
    const ids: string[] = [];
    await Promise.all(
      instances.map(async (instance, w) => {
        for (let i = 0; i < 10; i++) {
          const created = await call(instance, 'POST', '/api/v1/articles', token, { title: `S${w}-${i}`, body: 'b' });
          expect(created.status).toBe(201);
          ids.push(created.body.data.id);
        }
      }),
    );
    for (const stream of streams) {
      const deadline = Date.now() + 10_000;
      while (stream.events.length < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      stream.close();
      expect(stream.events.map((e) => e.data.id).sort()).toEqual([...ids].sort());
      const seqs = stream.events.map((e) => Number(e.id));
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    }
  });

  it('rate limits: one window for all three, per address and per user', async () => {
    // The app's own limits (public 60 a minute per address, api 100 a minute per user).
    const instances = await three(spawnServer, environment('limits'));
    const statuses: number[] = [];
    for (let i = 0; i < 75; i++)
      statuses.push((await fetch(`${instances[i % 3].url}/api/v1/schema/metadata/list`)).status);
    // A sliding window: exactly the limit unless a minute turns over during the test.
    const admitted = statuses.filter((s) => s === 200).length;
    expect(admitted).toBeLessThanOrEqual(60);
    expect(admitted).toBeGreaterThanOrEqual(58);
    expect(statuses.slice(-10).every((s) => s === 429)).toBe(true);
    const token = await adminToken(instances[0].url);
    const api: number[] = [];
    for (let i = 0; i < 110; i++)
      api.push((await call(instances[i % 3], 'GET', '/api/v1/articles?limit=1', token)).status);
    const served = api.filter((s) => s === 200).length;
    expect(served).toBeLessThanOrEqual(100);
    expect(served).toBeGreaterThanOrEqual(97);
    expect(api.slice(-5).every((s) => s === 429)).toBe(true);
  });

  it('the scheduler: one run per due time, whichever instance claims it', async () => {
    const env = { ...environment('jobs') };
    const instances = await three(spawnServer, env);
    const token = await adminToken(instances[0].url);
    const job = await call(instances[1], 'POST', '/api/v1/scheduledJobs', token, {
      name: 'Heartbeat',
      handler: 'heartbeat',
      scheduleType: 'interval',
      schedules: ['1s'],
    });
    expect(job.status).toBe(201);
    await new Promise((r) => setTimeout(r, 8000));
    const paused = await call(instances[0], 'PATCH', `/api/v1/scheduledJobs/${job.body.data.id}`, token, {
      enabled: false,
    });
    expect(paused.status).toBe(200);
    // A run claimed just before the pause may still be running: its end is what is awaited, not its start.
    const listRuns = async () => {
      const runs = await call(
        instances[2],
        'GET',
        `/api/v1/jobExecutions?jobId=${job.body.data.id}&limit=200&sort=startedAt`,
        token,
      );
      return runs.body.data.items as { startedAt: string; status: string }[];
    };
    let items = await listRuns();
    for (let i = 0; i < 50 && items.some((run) => run.status === 'running'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      items = await listRuns();
    }
    expect(items.length).toBeGreaterThanOrEqual(5);
    expect(items.length).toBeLessThanOrEqual(10);
    expect(items.map((run) => run.status)).toEqual(items.map(() => 'completed'));
    const gaps = items.slice(1).map((run, i) => Date.parse(run.startedAt) - Date.parse(items[i].startedAt));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(900);
  });

  it('rate limits while Redis is down: each instance counts for itself, none serves unlimited', async () => {
    const instances = await three(spawnServer, environment('fallback'));
    await redis.stop();
    try {
      const login = (i: number) =>
        fetch(`${instances[i % 3].url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'guess@example.test', password: `guess number ${i}` }),
        }).then((r) => r.status);
      const statuses: number[] = [];
      // The auth tier allows 20 a minute per address: 20 per instance while they cannot share.
      for (let i = 0; i < 75; i++) statuses.push(await login(i));
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(60);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
    } finally {
      await redis.start();
    }
  });
});
