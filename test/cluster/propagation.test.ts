import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminSignIn, type Cluster, call, signIn, startCluster, within } from '../support/cluster.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import type { SpawnedServer } from '../support/spawnServer.js';

/** The staleness bound the instances run with (the default) and what a test allows for its own polling. */
const BOUND_MS = 1000;
const POLL_SLACK_MS = 100;
const PASSWORD = 'correct horse battery staple!';

let redis: PrivateRedis;
let cluster: Cluster;
let a: SpawnedServer;
let others: SpawnedServer[];
let admin: string;
/** How long each change took to hold on every other instance, for the report at the end. */
const figures: Record<string, number> = {};

beforeAll(async () => {
  redis = await startPrivateRedis();
  cluster = await startCluster(3, redis.url);
  [a, ...others] = cluster.instances;
  admin = await adminSignIn(a);
  await waitForBus();
}, 120_000);
afterAll(async () => {
  cluster?.stop();
  await redis?.stop();
  console.log(`propagation (ms until every other instance agreed): ${JSON.stringify(figures)}`);
});

/** Every instance reports its bus up (admin health report). */
async function waitForBus(timeoutMs = 10_000) {
  for (const instance of cluster.instances)
    await within(
      async () => (await call(instance, 'GET', '/api/health', admin)).body.cluster?.up,
      (up) => up === true,
      timeoutMs,
    );
}

let users = 0;
/** A new account with `roles`, signed in: its id and a session token already used (and cached) on every instance. */
async function account(roles: string[] = ['USER']): Promise<{ id: string; email: string; token: string }> {
  const email = `member${++users}@example.test`;
  const created = await call(a, 'POST', '/api/v1/users', admin, {
    email,
    password: PASSWORD,
    displayName: email,
    roles,
  });
  expect(created.status).toBe(201);
  const token = await signIn(a, email, PASSWORD);
  for (const instance of cluster.instances)
    for (let i = 0; i < 2; i++) expect((await call(instance, 'GET', '/api/v1/auth/me', token)).status).toBe(200);
  return { id: created.body.data?.id ?? created.body.id, email, token };
}

/** The most any other instance took until `read` gave `status`. */
async function everyOther(name: string, read: (instance: SpawnedServer) => Promise<number>, status: number) {
  const times = await Promise.all(
    others.map((instance) =>
      within(
        () => read(instance),
        (s) => s === status,
        5000,
      ),
    ),
  );
  figures[name] = Math.max(...times);
  return figures[name];
}

describe('three instances on PostgreSQL + Redis', () => {
  it('report their bus in the health report and the metrics', async () => {
    const { body } = await call(others[0], 'GET', '/api/health', admin);
    expect(body.cluster).toMatchObject({ transport: 'redis', up: true, maxStalenessMs: BOUND_MS, peers: 2 });
    for (const channel of ['events', 'credentials', 'roles', 'counts', 'pulse'])
      expect(body.cluster.channels[channel].subscribed).toBe(true);
    expect(body.cluster.stalenessMs).toBeLessThanOrEqual(BOUND_MS);
    const metrics = await fetch(`${others[1].url}/api/metrics`, { headers: { authorization: `Bearer ${admin}` } });
    const text = await metrics.text();
    expect(text).toMatch(/^entigen_cluster_bus_up 1$/m);
    expect(text).toMatch(/^entigen_cluster_channel_subscribed\{channel="credentials"\} 1$/m);
    // Anonymous callers learn nothing of it.
    expect((await call(others[0], 'GET', '/api/health')).body.cluster).toBeUndefined();
  });

  it('end a session everywhere within the bound after a logout on one instance', async () => {
    const user = await account();
    expect((await call(a, 'POST', '/api/v1/auth/logout', user.token)).status).toBe(200);
    const took = await everyOther(
      'logout',
      async (i) => (await call(i, 'GET', '/api/v1/auth/me', user.token)).status,
      401,
    );
    expect(took).toBeLessThanOrEqual(BOUND_MS);
  });

  it('end the old sessions everywhere after a password change', async () => {
    const user = await account();
    const changed = await call(a, 'POST', '/api/v1/auth/change-password', user.token, {
      currentPassword: PASSWORD,
      newPassword: `${PASSWORD} again`,
    });
    expect(changed.status).toBe(200);
    const took = await everyOther(
      'passwordChange',
      async (i) => (await call(i, 'GET', '/api/v1/auth/me', user.token)).status,
      401,
    );
    expect(took).toBeLessThanOrEqual(BOUND_MS);
  });

  it('take an administrator`s power everywhere when disabled or demoted on one instance', async () => {
    const demoted = await account(['ADMIN']);
    const disabled = await account(['ADMIN']);
    for (const instance of others)
      expect((await call(instance, 'GET', '/api/v1/users', demoted.token)).status).toBe(200);
    expect((await call(a, 'PUT', `/api/v1/users/${demoted.id}`, admin, { roles: ['USER'] })).status).toBe(200);
    expect((await call(a, 'PUT', `/api/v1/users/${disabled.id}`, admin, { disabled: true })).status).toBe(200);
    let n = 0;
    const tookDemoted = await everyOther(
      'demote',
      async (i) =>
        (
          await call(i, 'POST', '/api/v1/users', demoted.token, {
            email: `escalate${++n}@example.test`,
            password: PASSWORD,
            displayName: 'Escalate',
            roles: ['ADMIN'],
          })
        ).status,
      403,
    );
    const tookDisabled = await everyOther(
      'disable',
      async (i) => (await call(i, 'GET', '/api/v1/users', disabled.token)).status,
      401,
    );
    expect(tookDemoted).toBeLessThanOrEqual(BOUND_MS);
    expect(tookDisabled).toBeLessThanOrEqual(BOUND_MS);
    // No account was created by the demoted administrator on any instance.
    const listed = await call(a, 'GET', '/api/v1/users?limit=200', admin);
    expect(JSON.stringify(listed.body)).not.toContain('escalate');
  });

  it('give a role`s new permission everywhere, and revoke an API key everywhere', async () => {
    expect(
      (
        await call(a, 'POST', '/api/v1/roles', admin, {
          key: 'AUDITOR',
          label: 'Auditor',
          permissions: ['articles:view'],
        })
      ).status,
    ).toBe(201);
    const auditor = await account(['AUDITOR']);
    for (const instance of cluster.instances)
      expect((await call(instance, 'GET', '/api/v1/scheduledJobs', auditor.token)).status).toBe(403);
    const put = await call(a, 'PUT', '/api/v1/roles/AUDITOR', admin, {
      permissions: ['articles:view', 'scheduledJobs:view'],
    });
    expect(put.status).toBe(200);
    const took = await everyOther(
      'rolePermission',
      async (i) => (await call(i, 'GET', '/api/v1/scheduledJobs', auditor.token)).status,
      200,
    );
    expect(took).toBeLessThanOrEqual(BOUND_MS);

    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const key = await call(a, 'POST', '/api/v1/apikeys', admin, {
      name: 'ci',
      permissions: ['articles:view'],
      expiresAt,
    });
    expect(key.status).toBe(201);
    for (const instance of others)
      expect((await call(instance, 'GET', '/api/v1/articles', key.body.data.token)).status).toBe(200);
    expect((await call(a, 'DELETE', `/api/v1/apikeys/${key.body.data.id}`, admin)).status).toBe(200);
    const tookKey = await everyOther(
      'apiKeyRevoke',
      async (i) => (await call(i, 'GET', '/api/v1/articles', key.body.data.token)).status,
      401,
    );
    expect(tookKey).toBeLessThanOrEqual(BOUND_MS);
  });

  it('trust nothing cached beyond the bound while Redis is down, and agree again after its restart', async () => {
    const user = await account();
    const auditor = await account(['AUDITOR']);
    for (const instance of cluster.instances)
      expect((await call(instance, 'GET', '/api/v1/scheduledJobs', auditor.token)).status).toBe(200);
    await redis.stop();
    // Changes made while no notice can travel.
    expect((await call(a, 'POST', '/api/v1/auth/logout', user.token)).status).toBe(200);
    expect((await call(a, 'PUT', '/api/v1/roles/AUDITOR', admin, { permissions: ['articles:view'] })).status).toBe(200);
    const tookLogout = await everyOther(
      'logoutRedisDown',
      async (i) => (await call(i, 'GET', '/api/v1/auth/me', user.token)).status,
      401,
    );
    const tookRole = await everyOther(
      'roleRedisDown',
      async (i) => (await call(i, 'GET', '/api/v1/scheduledJobs', auditor.token)).status,
      403,
    );
    expect(tookLogout).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);
    expect(tookRole).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);
    const down = await call(others[0], 'GET', '/api/health', admin);
    expect(down.body.cluster.up).toBe(false);
    expect(down.body.cluster.channels.credentials.subscribed).toBe(false);

    await redis.start();
    await waitForBus(15_000);
    // After the restart notices travel again: a logout is heard at once.
    const again = await account();
    expect((await call(a, 'POST', '/api/v1/auth/logout', again.token)).status).toBe(200);
    const took = await everyOther(
      'logoutAfterRestart',
      async (i) => (await call(i, 'GET', '/api/v1/auth/me', again.token)).status,
      401,
    );
    expect(took).toBeLessThanOrEqual(BOUND_MS);
  });
});
