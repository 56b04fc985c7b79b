import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { MongoStore } from '../../runtime/store/mongo/mongoStore.js';
import { fakeMongoClient, fakeMongoDeployment } from '../support/fakeMongo.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

/** The count cache's hits as /api/metrics shows them; undefined when nothing is remembered. */
async function cacheHits(server: TestServer, token: string): Promise<number | undefined> {
  const text = await (
    await fetch(`${server.url}/api/metrics`, { headers: { authorization: `Bearer ${token}` } })
  ).text();
  const match = /^entigen_read_cache_hits (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * On MongoDB a server remembers lists and counts only where a change stream lets it hear every
 * writer (a replica set; the driver stand-in plays one). A write by another client of the same
 * database reaches its caches within the staleness bound.
 */
describe('MongoDB with change streams, and a write made by another client', () => {
  const deployment = fakeMongoDeployment();
  let server: TestServer;
  let outside: MongoStore;
  let admin: { id: string; token: string };

  beforeAll(async () => {
    server = await startTestServer(
      {},
      {
        overrides: { rateLimit: GENEROUS_LIMITS },
        store: MongoStore.withClient(fakeMongoClient({ changeStreams: true, deployment }), 'test'),
      },
    );
    outside = MongoStore.withClient(fakeMongoClient({ changeStreams: true, deployment }), 'test');
    await outside.init(registry.model);
    admin = await server.user({ roles: ['ADMIN'] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('remembers, and forgets what another client changed', async () => {
    const made = await server.call('POST', '/api/v1/notes', { token: admin.token, body: { title: 'seed' } });
    expect(made.status).toBe(201);
    const total = async () =>
      (await server.call('GET', '/api/v1/notes?pinned=true', { token: admin.token })).body.data.totalCount;
    const health = await server.call('GET', '/api/health', { token: admin.token });
    expect(health.body.cluster).toMatchObject({ transport: 'mongodb', up: true });
    expect(await total()).toBe(0);
    const before = await cacheHits(server, admin.token);
    expect(await total()).toBe(0);
    expect(await cacheHits(server, admin.token)).toBeGreaterThan(before!);

    await outside.update('notes', made.body.data.id, { pinned: true });
    const started = performance.now();
    while ((await total()) !== 1) {
      expect(performance.now() - started).toBeLessThan(1000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });

  it('remembers nothing on a deployment without change streams', async () => {
    const standalone = await startTestServer(
      {},
      { store: MongoStore.withClient(fakeMongoClient({ changeStreams: false }), 'test') },
    );
    try {
      const root = await standalone.user({ roles: ['ADMIN'] });
      expect(await cacheHits(standalone, root.token)).toBeUndefined();
      expect((await standalone.call('GET', '/api/health', { token: root.token })).body.cluster.transport).toBe('none');
    } finally {
      await standalone.close();
    }
  });
});
