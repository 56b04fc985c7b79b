import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, type SpawnedServer, spawnChildServer } from '../support/spawnServer.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

const FAST = {
  attempts: 5,
  backoffMs: 40,
  maxBackoffMs: 200,
  timeoutMs: 1000,
  allowPrivateTargets: true,
  leaseMs: 2000,
};

describe('webhooks', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let receiver: WebhookReceiver;
  const hooks: string[] = [];

  const createWebhook = async (body: Record<string, unknown>) => {
    const created = await server.call('POST', '/api/v1/webhooks', { token: admin.token, body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    hooks.push(created.body.data.id);
    return created.body.data as { id: string; secret: string };
  };
  const article = async (title: string) =>
    (await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title, body: 'b' } })).body.data;
  const deliveries = async (webhookId: string) =>
    (
      await server.call('GET', `/api/v1/webhookDeliveries?webhookId=${webhookId}&sort=eventSeq&limit=200`, {
        token: admin.token,
      })
    ).body.data.items;

  beforeAll(async () => {
    server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS, webhooks: FAST } });
    admin = await server.user({ roles: ['ADMIN'] });
    // The webhooks feature's work runs on every app that has the webhooks entity.
    expect(server.webhooks).toBeDefined();
  });
  afterEach(async () => {
    // Each test's webhooks stop, so the next test's receiver sees only its own.
    for (const id of hooks.splice(0))
      await server.call('PATCH', `/api/v1/webhooks/${id}`, { token: admin.token, body: { enabled: false } });
    await server.webhooks?.idle();
    await receiver?.close();
  });
  afterAll(() => server.close());

  it('delivers a signed event that an independent Standard Webhooks implementation verifies', async () => {
    receiver = await startWebhookReceiver();
    const hook = await createWebhook({ url: receiver.url, events: ['articles.created'], description: 'CRM' });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    // Shown once: reads mask it.
    const read = await server.call('GET', `/api/v1/webhooks/${hook.id}`, { token: admin.token });
    expect(read.body.data.secret).not.toBe(hook.secret);

    const made = await article('Signed');
    const [delivery] = await receiver.accepted(1);
    const verified = new Webhook(hook.secret).verify(delivery.raw, {
      'webhook-id': delivery.headers['webhook-id'] as string,
      'webhook-timestamp': delivery.headers['webhook-timestamp'] as string,
      'webhook-signature': delivery.headers['webhook-signature'] as string,
    }) as Record<string, any>;
    expect(verified).toMatchObject({
      id: delivery.headers['webhook-id'],
      type: 'articles.created',
      occurredAt: expect.any(String),
      data: { id: made.id, title: 'Signed' },
    });
    // A tampered body does not verify.
    expect(() =>
      new Webhook(hook.secret).verify(delivery.raw.replace('Signed', 'Forged'), {
        'webhook-id': delivery.headers['webhook-id'] as string,
        'webhook-timestamp': delivery.headers['webhook-timestamp'] as string,
        'webhook-signature': delivery.headers['webhook-signature'] as string,
      }),
    ).toThrow();
    await server.webhooks?.idle();
    const [row] = await deliveries(hook.id);
    expect(row).toMatchObject({ status: 'delivered', attempts: 1, responseCode: 200, eventType: 'articles.created' });
    expect(row.latencyMs).toEqual(expect.any(Number));

    // A rotated secret signs what comes next; the old one no longer verifies.
    const rotated = await server.call('POST', `/api/v1/webhooks/${hook.id}/rotate-secret`, { token: admin.token });
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(hook.secret);
    await article('After rotation');
    const [, second] = await receiver.accepted(2);
    const headers = {
      'webhook-id': second.headers['webhook-id'] as string,
      'webhook-timestamp': second.headers['webhook-timestamp'] as string,
      'webhook-signature': second.headers['webhook-signature'] as string,
    };
    expect(() => new Webhook(rotated.body.data.secret).verify(second.raw, headers)).not.toThrow();
    expect(() => new Webhook(hook.secret).verify(second.raw, headers)).toThrow();

    // The health report shows how far the webhook has come.
    await server.webhooks?.idle();
    const health = await server.call('GET', '/api/health', { token: admin.token });
    expect(health.body.events.log.size).toBeGreaterThan(0);
    expect(health.body.events.openStreams).toBe(0);
    const mine = health.body.events.webhooks.find((w: { id: string }) => w.id === hook.id);
    expect(mine).toMatchObject({ url: receiver.url, enabled: true, oldestUndelivered: null, pending: 0, failed: 0 });
  });

  it('retries with growing delays: a receiver failing three times gets the event on the fourth attempt, in order', async () => {
    receiver = await startWebhookReceiver();
    receiver.answer = [500, 503, 500];
    const hook = await createWebhook({ url: receiver.url, events: ['articles.*'] });
    const first = await article('First');
    const second = await article('Second');
    const accepted = await receiver.accepted(2);
    expect(accepted.map((d) => d.body.data.id)).toEqual([first.id, second.id]);
    // Nothing of the second event went out before the first was delivered.
    const order = receiver.received.map((d) => [d.status, d.body.data.id]);
    expect(order).toEqual([
      [500, first.id],
      [503, first.id],
      [500, first.id],
      [200, first.id],
      [200, second.id],
    ]);
    // The same message id on every attempt, so receivers can drop duplicates.
    expect(new Set(receiver.received.slice(0, 4).map((d) => d.headers['webhook-id'])).size).toBe(1);
    await server.webhooks?.idle();
    const rows = await deliveries(hook.id);
    expect(rows.map((r: any) => [r.status, r.attempts, r.responseCode])).toEqual([
      ['delivered', 4, 200],
      ['delivered', 1, 200],
    ]);
  });

  it('dead-letters after the last attempt, moves on, and redelivers on request', async () => {
    receiver = await startWebhookReceiver();
    receiver.answer = (delivery) => (delivery.body?.data?.title === 'Doomed' ? 500 : 200);
    const hook = await createWebhook({ url: receiver.url, events: ['articles.created'] });
    const doomed = await article('Doomed');
    const next = await article('Next');
    const [ok] = await receiver.accepted(1);
    expect(ok.body.data.id).toBe(next.id);
    await server.webhooks?.idle();
    const rows = await deliveries(hook.id);
    expect(rows[0]).toMatchObject({ status: 'failed', attempts: FAST.attempts, responseCode: 500 });
    const health = await server.call('GET', '/api/health', { token: admin.token });
    expect(health.body.events.webhooks.find((w: { id: string }) => w.id === hook.id).failed).toBe(1);
    expect(rows[0].lastError).toMatch(/500/);
    expect(rows[0].responseBody.length).toBeLessThanOrEqual(1024);
    expect(receiver.received.filter((d) => d.body.data.id === doomed.id)).toHaveLength(FAST.attempts);

    receiver.answer = [];
    const again = await server.call('POST', `/api/v1/webhookDeliveries/${rows[0].id}/redeliver`, {
      token: admin.token,
    });
    expect(again.status).toBe(202);
    expect(again.body.data).toMatchObject({ status: 'pending', manual: true });
    const accepted = await receiver.accepted(2);
    expect(accepted[1].body.data.id).toBe(doomed.id);
    // Until its answer is recorded the redelivery is pending, and another one is refused (409).
    await server.webhooks?.idle();
    expect(
      (await server.call('POST', `/api/v1/webhookDeliveries/${rows[0].id}/redeliver`, { token: admin.token })).status,
    ).toBe(202);
  });

  it('replays a range of events to one webhook', async () => {
    receiver = await startWebhookReceiver();
    const hook = await createWebhook({ url: receiver.url, events: ['articles.created'], entities: ['articles'] });
    const a = await article('Replay A');
    const b = await article('Replay B');
    await receiver.accepted(2);
    // A delivery's row is written once its POST has been answered.
    await server.webhooks?.idle();
    const seqs = (await deliveries(hook.id)).map((r: any) => r.eventSeq);
    const replay = await server.call('POST', `/api/v1/webhooks/${hook.id}/replay`, {
      token: admin.token,
      body: { from: seqs[0] - 1, to: seqs[1] },
    });
    expect(replay.status).toBe(202);
    expect(replay.body.data).toEqual({ queued: 2, from: seqs[0] - 1, to: seqs[1] });
    const all = await receiver.accepted(4);
    expect(all.slice(2).map((d) => d.body.data.id)).toEqual([a.id, b.id]);
    const bad = await server.call('POST', `/api/v1/webhooks/${hook.id}/replay`, {
      token: admin.token,
      body: { from: 5, to: 2 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.to).toMatch(/before from/);
    expect(
      (await server.call('POST', `/api/v1/webhooks/${hook.id}/replay`, { token: admin.token, body: { from: -1 } })).body
        .error.details.from,
    ).toBeDefined();
  });

  it('does not follow redirects and gives up on a receiver that does not answer in time', async () => {
    receiver = await startWebhookReceiver();
    receiver.answer = [302];
    receiver.headers = { location: 'http://169.254.169.254/latest/meta-data' };
    const hook = await createWebhook({ url: receiver.url, events: ['articles.created'] });
    await article('Redirected');
    await receiver.accepted(1);
    await server.webhooks?.idle();
    const [row] = await deliveries(hook.id);
    expect(row).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(receiver.received[0].status).toBe(302);
    expect(receiver.received).toHaveLength(2);

    receiver.answer = [0];
    const slow = await article('Unanswered');
    const accepted = await receiver.accepted(2);
    expect(accepted[1].body.data.id).toBe(slow.id);
    await server.webhooks?.idle();
    const rows = await deliveries(hook.id);
    expect(rows[1], JSON.stringify(rows)).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(receiver.received.at(-2)!.status).toBe(0);
  });

  it('is for administrators only, checks its target and patterns, and deliveries are not created by hand', async () => {
    receiver = await startWebhookReceiver();
    const user = await server.user();
    expect((await server.call('GET', '/api/v1/webhooks', { token: user.token })).status).toBe(403);
    expect(
      (await server.call('POST', '/api/v1/webhooks', { token: user.token, body: { url: 'https://example.test/h' } }))
        .status,
    ).toBe(403);
    expect((await server.call('GET', '/api/v1/webhookDeliveries', { token: user.token })).status).toBe(403);
    const bad = await server.call('POST', '/api/v1/webhooks', {
      token: admin.token,
      body: { url: 'ftp://example.test/x', events: ['nope.*', 'articles.exploded', 'a.b.c'], entities: ['users'] },
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error.details).sort()).toEqual([
      'entities.0',
      'events.0',
      'events.1',
      'events.2',
      'url',
    ]);
    expect(
      (
        await server.call('POST', '/api/v1/webhooks', {
          token: admin.token,
          body: { url: 'https://user:pw@example.test/x' },
        })
      ).body.error.details.url,
    ).toMatch(/credentials/);
    const junk = await server.call('POST', '/api/v1/webhookDeliveries', {
      token: admin.token,
      body: {},
    });
    expect([400, 422]).toContain(junk.status);
  });
});

describe('webhook targets without the private-network allowance', () => {
  it('refuses loopback, private and link-local targets', async () => {
    const server = await startTestServer();
    const admin = await server.user({ roles: ['ADMIN'] });
    try {
      for (const url of [
        'http://127.0.0.1:9/hook',
        'http://localhost/hook',
        'http://10.1.2.3/hook',
        'http://169.254.169.254/latest',
        'http://[::1]/hook',
        'http://[::ffff:127.0.0.1]/hook',
        'http://192.168.1.1/',
      ]) {
        const refused = await server.call('POST', '/api/v1/webhooks', { token: admin.token, body: { url } });
        expect(refused.status, url).toBe(400);
        expect(refused.body.error.details.url).toMatch(/allowPrivateTargets/);
      }
      const fine = await server.call('POST', '/api/v1/webhooks', {
        token: admin.token,
        body: { url: 'https://hooks.example.com/entigen', enabled: false },
      });
      expect(fine.status).toBe(201);
    } finally {
      await server.close();
    }
  });
});

describe('webhooks across a crash', () => {
  it('still delivers an event whose server was killed (kill -9) mid-retry, once restarted', async () => {
    const receiver = await startWebhookReceiver();
    // The first attempt fails; the server dies before its retry.
    receiver.answer = [500];
    const database = `sqlite:${join(mkdtempSync(join(tmpdir(), 'entigen-hook-crash-')), 'app.db')}`;
    const start = () => spawnChildServer({ DATABASE_URL: database });
    let first: SpawnedServer | undefined;
    let second: SpawnedServer | undefined;
    try {
      first = await start();
      const token = await adminToken(first.url);
      const call = (url: string, path: string, body: unknown) =>
        fetch(`${url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await call(first.url, '/api/v1/webhooks', { url: receiver.url, events: ['articles.*'] })).status).toBe(
        201,
      );
      const made = (await (await call(first.url, '/api/v1/articles', { title: 'Survives', body: 'b' })).json()) as any;
      // The first attempt has failed: kill the process before the retry (400 ms later).
      for (let i = 0; i < 100 && receiver.received.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(receiver.received.map((d) => d.status)).toEqual([500]);
      first.child.kill('SIGKILL');
      await new Promise((resolve) => first!.child.once('exit', resolve));
      const before = receiver.received.length;

      second = await start();
      const [delivered] = await receiver.accepted(1, 15_000);
      expect(delivered.body).toMatchObject({ type: 'articles.created', data: { id: made.data.id } });
      expect(receiver.received.length).toBeGreaterThan(before);
    } finally {
      first?.child.kill('SIGKILL');
      second?.child.kill('SIGKILL');
      await receiver.close();
    }
  }, 60_000);
});
