import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { FileStorage } from '../../runtime/files/fileStorage.js';
import { openFileStorage } from '../../runtime/files/mediaFiles.js';
import { repoRoot } from '../support/cli.js';
import { type Nginx, startNginx } from '../support/nginx.js';
import { type S3Target, startS3 } from '../support/s3Server.js';
import { adminToken, type SpawnedServer, spawnServer } from '../support/spawnServer.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let nginx: Nginx | undefined;
let s3: S3Target | undefined;
let receiver: WebhookReceiver | undefined;
const instances: SpawnedServer[] = [];
afterAll(async () => {
  for (const instance of instances) instance.child.kill('SIGKILL');
  await nginx?.stop();
  await s3?.close();
  await receiver?.close();
});

const keys = async (storage: FileStorage) => {
  const found: string[] = [];
  for await (const key of storage.list()) found.push(key);
  return found;
};

describe('three instances behind nginx on PostgreSQL, Redis and S3', () => {
  it('answer every request through a rolling restart, and share media, webhooks and afterCommit after it', async () => {
    s3 = await startS3();
    receiver = await startWebhookReceiver();
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=deploy_${randomUUID().replace(/-/g, '')}`,
      REDIS_URL: 'redis://127.0.0.1:6379',
      ENTIGEN_REDIS_PREFIX: `deploy-${randomUUID()}`,
      APP_ENCRYPTION_KEY: 'deployment-test-key',
      TRUST_PROXY: 'loopback',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      RATE_LIMIT_AUTH: '100000/60',
      RATE_LIMIT_API: '1000000/60',
      RATE_LIMIT_PUBLIC: '1000000/60',
      ...s3.env,
    };
    const ports = [await freePort(), await freePort(), await freePort()];
    instances.push(await spawnServer(env, repoRoot, ports[0]));
    instances.push(...(await Promise.all(ports.slice(1).map((port) => spawnServer(env, repoRoot, port)))));
    nginx = await startNginx(
      ports.map((port) => `127.0.0.1:${port}`),
      await freePort(),
    );
    const front = nginx.url;
    const admin = await adminToken(front);
    const auth = { authorization: `Bearer ${admin}` };
    const hook = await fetch(`${front}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['articles.created'] }),
    });
    expect(hook.status).toBe(201);

    // Continuous load through nginx: reads, writes and health checks, four at a time.
    let loading = true;
    const failures: string[] = [];
    let requests = 0;
    let created = 0;
    const worker = async (n: number) => {
      for (let i = 0; loading; i++) {
        const kind = i % 3;
        try {
          const res =
            kind === 0
              ? await fetch(`${front}/api/v1/articles`, {
                  method: 'POST',
                  headers: { ...auth, 'content-type': 'application/json' },
                  body: JSON.stringify({ title: `Load ${n}.${i}`, body: 'b' }),
                })
              : await fetch(kind === 1 ? `${front}/api/v1/articles?limit=5` : `${front}/api/health`, { headers: auth });
          await res.arrayBuffer();
          requests++;
          if (kind === 0 && res.status === 201) created++;
          if (res.status >= 300) failures.push(`${res.status} on request ${i} of worker ${n}`);
        } catch (error) {
          failures.push(`${(error as Error).message} on request ${i} of worker ${n}`);
        }
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(worker));

    // Rolling restart: SIGTERM one instance, let it drain and exit, start it again, then the next.
    for (const [index, port] of ports.entries()) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const stopping = instances[index];
      stopping.child.kill('SIGTERM');
      expect(await stopping.exited).toBe(0);
      instances[index] = await spawnServer(env, repoRoot, port);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    loading = false;
    await load;
    console.log(`rolling restart of 3 instances under load: ${requests} requests, ${failures.length} failed`);
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(300);

    // Webhooks go on after the restart: every article created so far, and one more.
    const after = await fetch(`${front}/api/v1/articles`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'After the restart', body: 'b' }),
    });
    expect(after.status).toBe(201);
    await receiver.accepted(created + 1, 20_000);

    // An upload through one instance is served by the others.
    const bytes = new Uint8Array(20_000).map((_, i) => i % 251);
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'shared.bin');
    const uploaded = await fetch(`${instances[0].url}/api/v1/mediaAssets/upload`, {
      method: 'POST',
      body: form,
      headers: auth,
    });
    expect(uploaded.status).toBe(201);
    const asset = ((await uploaded.json()) as { data: { id: string; url: string } }).data;
    for (const instance of instances.slice(1)) {
      const served = await fetch(`${instance.url}${asset.url}`, { headers: auth });
      expect(served.status).toBe(200);
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(bytes);
    }

    // afterCommit runs after the restart too: deleting the asset removes its file from the bucket.
    const storage = openFileStorage(
      { driver: 's3', dir: '', maxBytes: 0, thumbnails: { sizes: [] }, s3: s3.settings },
      repoRoot,
    );
    expect(await keys(storage)).toContain(`${asset.id}/file.bin`);
    expect((await fetch(`${front}/api/v1/mediaAssets/${asset.id}`, { method: 'DELETE', headers: auth })).status).toBe(
      200,
    );
    const until = Date.now() + 10_000;
    while ((await keys(storage)).some((key) => key.startsWith(asset.id)) && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await keys(storage)).filter((key) => key.startsWith(asset.id))).toEqual([]);
    await storage.close();
  }, 180_000);
});
