import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../support/cluster.js';
import { adminToken, type SpawnedServer, spawnChildServer, spawnServer } from '../support/spawnServer.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

const running: SpawnedServer[] = [];
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) s.child.kill('SIGKILL');
  for (const r of receivers.splice(0)) await r.close();
});

describe('restarts of `entigen serve`', () => {
  it('let the next instance deliver at once after a graceful stop: the stopping one lets its leases go', async () => {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    // The app's own settings: 30 s leases, as a deployment has them.
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=restart_${randomUUID().replace(/-/g, '')}`,
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      APP_ENCRYPTION_KEY: 'restart-test-key',
    };
    const first = await spawnServer(env);
    running.push(first);
    const admin = await adminToken(first.url);
    const hook = await call(first, 'POST', '/api/v1/webhooks', admin, {
      url: receiver.url,
      events: ['articles.created'],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const before = await call(first, 'POST', '/api/v1/articles', admin, { title: 'Before', body: 'b' });
    expect(before.status, `${JSON.stringify(before.body)} ${first.output().slice(-2000)}`).toBe(201);
    await receiver.accepted(1, 10_000);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const second = await spawnServer(env);
    running.push(second);
    const started = Date.now();
    expect((await call(second, 'POST', '/api/v1/articles', admin, { title: 'After', body: 'b' })).status).toBe(201);
    await receiver.accepted(2, 10_000);
    const took = Date.now() - started;
    console.log(`first delivery after a graceful restart: ${took} ms (the lease is 30 s)`);
    expect(took).toBeLessThan(5000);
  });

  it('run afterCommit hooks at once on the next instance after a graceful stop', async () => {
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=restart_${randomUUID().replace(/-/g, '')}`,
      AFTER_COMMIT_URL: receiver.url,
      CHILD_LEASE_MS: '30000',
    };
    const first = await spawnChildServer(env);
    running.push(first);
    const admin = await adminToken(first.url);
    expect((await call(first, 'POST', '/api/v1/articles', admin, { title: 'Before', body: 'b' })).status).toBe(201);
    await receiver.accepted(1, 10_000);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const second = await spawnChildServer(env);
    running.push(second);
    const started = Date.now();
    expect((await call(second, 'POST', '/api/v1/articles', admin, { title: 'After', body: 'b' })).status).toBe(201);
    await receiver.accepted(2, 20_000);
    const took = Date.now() - started;
    console.log(`first afterCommit after a graceful restart: ${took} ms (the lease is 30 s)`);
    expect(took).toBeLessThan(5000);
  });
});
