import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../support/cluster.js';
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlpReceiver.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { adminToken, type SpawnedServer, spawnChildServer } from '../support/spawnServer.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

const running: SpawnedServer[] = [];
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of running.splice(0)) s.child.kill('SIGKILL');
  for (const close of closers.splice(0)) await close().catch(() => undefined);
});

describe('traces across instances', () => {
  it('keeps a write on one instance and its webhook delivered by another in one trace', async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    const webhooks: WebhookReceiver = await startWebhookReceiver();
    const redis: PrivateRedis = await startPrivateRedis();
    closers.push(receiver.close, webhooks.close, redis.stop);
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=traces_${randomUUID().replace(/-/g, '')}`,
      REDIS_URL: redis.url,
      ENTIGEN_REDIS_PREFIX: `traces-${randomUUID()}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    // A starts alone and takes the webhook's cursor with the first event; whichever instance
    // holds it later (B may take it over if A's lease lapsed while B was starting) delivers.
    const a = await spawnChildServer(env);
    running.push(a);
    const admin = await adminToken(a.url);
    const hook = await call(a, 'POST', '/api/v1/webhooks', admin, { url: webhooks.url, events: ['articles.created'] });
    expect(hook.status).toBe(201);
    expect((await call(a, 'POST', '/api/v1/articles', admin, { title: 'On A', body: 'b' })).status).toBe(201);
    await webhooks.accepted(1);
    const b = await spawnChildServer(env);
    running.push(b);

    // Writes on B, then A, in turn: each one's webhook span is in the write's trace, whoever
    // delivers it (each instance names itself host:pid); since one instance holds the cursor,
    // some write is delivered by the other instance than the one that took it.
    const instance = (server: SpawnedServer) => `${hostname()}:${server.child.pid}`;
    let crossed = 0;
    for (let i = 0; i < 6 && crossed === 0; i++) {
      const writer = i % 2 === 0 ? b : a;
      const created = await call(writer, 'POST', '/api/v1/articles', admin, { title: `Write ${i}`, body: 'b' });
      expect(created.status).toBe(201);
      const delivered = (await webhooks.accepted(2 + i)).find((d) => d.body.data.id === created.body.data.id)!;
      const traceId = delivered.headers.traceparent!.toString().split('-')[1];
      const write = await receiver.waitFor((s) => s.name === 'POST /api/v1/articles' && s.traceId === traceId);
      expect(write.resource['service.instance.id']).toBe(instance(writer));
      const delivery = await receiver.waitFor((s) => s.name === 'webhook articles.created' && s.traceId === traceId);
      expect(delivered.headers.traceparent).toBe(`00-${traceId}-${delivery.spanId}-01`);
      // The delivery's span descends from the write's server span, across the two processes.
      const chain = receiver.trace(traceId);
      const byId = new Map(chain.map((s) => [s.spanId, s]));
      let top = delivery;
      while (byId.has(top.parentSpanId)) top = byId.get(top.parentSpanId)!;
      expect(top.spanId).toBe(write.spanId);
      if (delivery.resource['service.instance.id'] !== instance(writer)) crossed++;
    }
    expect(crossed).toBeGreaterThan(0);
  }, 120_000);
});
