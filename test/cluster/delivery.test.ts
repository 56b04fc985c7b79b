import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../support/cluster.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { adminToken, type SpawnedServer, spawnChildServer } from '../support/spawnServer.js';

/** One POST as a receiver saw it. */
interface Received {
  key: string;
  body: any;
  startedAt: number;
}

/** A slow HTTP receiver that records every POST and the most POSTs it ever had in flight at once. */
async function slowReceiver(delayMs: number) {
  const received: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const body = JSON.parse(text);
      received.push({ key: String(req.headers['webhook-id'] ?? `${body.seq}`), body, startedAt: Date.now() });
      setTimeout(() => {
        inFlight--;
        res.writeHead(200).end('ok');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    received,
    maxInFlight: () => maxInFlight,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const running: SpawnedServer[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) s.child.kill('SIGKILL');
  for (const close of closers.splice(0)) await close().catch(() => undefined);
});

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Three instances (test/support/serverChild.ts: 1 s leases) on one PostgreSQL schema and a Redis of the test's own. */
async function threeInstances(afterCommitUrl: string) {
  const redis: PrivateRedis = await startPrivateRedis();
  closers.push(redis.stop);
  const env = {
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=delivery_${randomUUID().replace(/-/g, '')}`,
    REDIS_URL: redis.url,
    ENTIGEN_REDIS_PREFIX: `delivery-${randomUUID()}`,
    AFTER_COMMIT_URL: afterCommitUrl,
  };
  const first = await spawnChildServer(env);
  running.push(first);
  const rest = await Promise.all([spawnChildServer(env), spawnChildServer(env)]);
  running.push(...rest);
  return { instances: [first, ...rest], admin: await adminToken(first.url) };
}

/** Each key's number of POSTs. */
function counts(received: Received[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of received) out.set(r.key, (out.get(r.key) ?? 0) + 1);
  return out;
}

describe('webhooks and afterCommit hooks across three instances', () => {
  it('deliver each event once, in order, one POST at a time, to a slow receiver', async () => {
    const webhookReceiver = await slowReceiver(150);
    const hookReceiver = await slowReceiver(20);
    closers.push(webhookReceiver.close, hookReceiver.close);
    const { instances, admin } = await threeInstances(hookReceiver.url);
    const hook = await call(instances[0], 'POST', '/api/v1/webhooks', admin, {
      url: webhookReceiver.url,
      events: ['articles.created'],
    });
    expect(hook.status).toBe(201);
    const ids: string[] = [];
    const total = 40;
    // Three writers at once, one per instance.
    await Promise.all(
      instances.map(async (instance, w) => {
        for (let i = w; i < total; i += 3) {
          const created = await call(instance, 'POST', '/api/v1/articles', admin, { title: `Event ${i}`, body: 'b' });
          expect(created.status).toBe(201);
          ids.push(created.body.data.id);
        }
      }),
    );
    await until(() => counts(webhookReceiver.received).size >= total, 60_000, 'every event delivered');
    await until(() => new Set(hookReceiver.received.map((r) => r.body.id)).size >= total, 30_000, 'every hook ran');
    // A moment more: nothing is sent twice later either.
    await new Promise((r) => setTimeout(r, 1500));

    const posts = counts(webhookReceiver.received);
    expect([...posts.values()].filter((n) => n > 1)).toEqual([]);
    expect(webhookReceiver.received.length).toBe(total);
    expect(webhookReceiver.maxInFlight()).toBe(1);
    // In the log's order: the deliveries name each entity's event number.
    const rows = await call(
      instances[1],
      'GET',
      `/api/v1/webhookDeliveries?webhookId=${hook.body.data.id}&limit=200`,
      admin,
    );
    expect(rows.status).toBe(200);
    const seqOf = new Map<string, number>(rows.body.data.items.map((row: any) => [row.entityId, row.eventSeq]));
    expect(rows.body.data.items.length).toBe(total);
    expect(new Set(seqOf.values()).size).toBe(total);
    const order = webhookReceiver.received.map((r) => seqOf.get(r.body.data.id)!);
    expect(order).toEqual([...order].sort((x, y) => x - y));
    // afterCommit: once each, without a crash.
    expect(
      [...counts(hookReceiver.received.map((r) => ({ ...r, key: r.body.id }))).values()].every((n) => n === 1),
    ).toBe(true);
    expect(new Set(hookReceiver.received.map((r) => r.body.id))).toEqual(new Set(ids));
  });

  it('lose no acknowledged write through kill -9 of the delivering instance, and repeat at most the event in flight', async () => {
    const webhookReceiver = await slowReceiver(100);
    const hookReceiver = await slowReceiver(100);
    closers.push(webhookReceiver.close, hookReceiver.close);
    const redis = await startPrivateRedis();
    closers.push(redis.stop);
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=kill_${randomUUID().replace(/-/g, '')}`,
      REDIS_URL: redis.url,
      ENTIGEN_REDIS_PREFIX: `kill-${randomUUID()}`,
      AFTER_COMMIT_URL: hookReceiver.url,
    };
    // A starts alone and takes both cursors (the webhook's and afterCommit's) with its first event.
    const a = await spawnChildServer(env);
    running.push(a);
    const admin = await adminToken(a.url);
    const hook = await call(a, 'POST', '/api/v1/webhooks', admin, {
      url: webhookReceiver.url,
      events: ['articles.created'],
    });
    expect(hook.status).toBe(201);
    const acknowledged: string[] = [];
    const create = async (instance: SpawnedServer, title: string) => {
      const created = await call(instance, 'POST', '/api/v1/articles', admin, { title, body: 'b' }).catch(
        () => undefined,
      );
      if (created?.status === 201) acknowledged.push(created.body.data.id);
    };
    await create(a, 'First');
    await until(
      () => webhookReceiver.received.length === 1 && hookReceiver.received.length === 1,
      10_000,
      'A delivers',
    );
    const [b, writer] = await Promise.all([spawnChildServer(env), spawnChildServer(env)]);
    running.push(b, writer);

    // A backlog of writes while A delivers; A dies with deliveries in flight and more queued.
    const burst = Array.from({ length: 30 }, (_, i) => create(writer, `Burst ${i}`));
    await until(
      () => webhookReceiver.received.length >= 6 && hookReceiver.received.length >= 6,
      20_000,
      'A is delivering',
    );
    a.child.kill('SIGKILL');
    await Promise.all(burst);
    for (let i = 0; i < 10; i++) await create(i % 2 ? b : writer, `After ${i}`);
    expect(acknowledged.length).toBe(41);
    for (const id of acknowledged)
      expect((await call(writer, 'GET', `/api/v1/articles/${id}`, admin)).status).toBe(200);

    const delivered = () => new Set(webhookReceiver.received.map((r) => r.body.data.id));
    await until(() => acknowledged.every((id) => delivered().has(id)), 90_000, 'every acknowledged write delivered');
    const ran = () => new Set(hookReceiver.received.map((r) => r.body.id));
    await until(() => acknowledged.every((id) => ran().has(id)), 90_000, 'every afterCommit ran');
    await new Promise((r) => setTimeout(r, 1500));
    const repeatedPosts = webhookReceiver.received.length - counts(webhookReceiver.received).size;
    const repeatedHooks = hookReceiver.received.length - ran().size;
    console.log(
      `kill -9 of the delivering instance: ${acknowledged.length} writes acknowledged and kept; webhook POSTs ${webhookReceiver.received.length} for ${delivered().size} events (repeated ${repeatedPosts}); afterCommit runs ${hookReceiver.received.length} for ${ran().size} events (repeated ${repeatedHooks})`,
    );
    expect(repeatedPosts).toBeLessThanOrEqual(1);
    expect(repeatedHooks).toBeLessThanOrEqual(1);
    // Never two POSTs to the webhook at once; the order of first deliveries is the log's.
    expect(webhookReceiver.maxInFlight()).toBe(1);
    const rows = await call(writer, 'GET', `/api/v1/webhookDeliveries?webhookId=${hook.body.data.id}&limit=200`, admin);
    const seqOf = new Map<string, number>(rows.body.data.items.map((row: any) => [row.entityId, row.eventSeq]));
    expect(rows.body.data.items.length).toBe(acknowledged.length);
    const firsts: number[] = [];
    const seen = new Set<string>();
    for (const r of webhookReceiver.received) {
      if (seen.has(r.key)) continue;
      seen.add(r.key);
      firsts.push(seqOf.get(r.body.data.id)!);
    }
    expect(firsts).toEqual([...firsts].sort((x, y) => x - y));
  });
});
