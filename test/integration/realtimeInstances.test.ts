import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { adminToken, type SpawnedServer, spawnChildServer } from '../support/spawnServer.js';
import { openSse } from '../support/sse.js';

const running: SpawnedServer[] = [];
afterEach(() => {
  for (const server of running.splice(0)) server.child.kill('SIGKILL');
});

describe('realtime across instances on one PostgreSQL and one Redis', () => {
  it('delivers writes made through instance A to a subscriber on instance B, in log order', async () => {
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/test?schema=rt_${randomUUID().replace(/-/g, '')}`,
      REDIS_URL: 'redis://127.0.0.1:6379',
      ENTIGEN_REDIS_PREFIX: `rt-${randomUUID()}`,
    };
    const a = await spawnChildServer(env);
    running.push(a);
    const b = await spawnChildServer(env);
    running.push(b);
    const token = await adminToken(a.url);
    // The instances poll the log once a minute here: what B sends within seconds came through Redis.
    const stream = await openSse(`${b.url}/api/v1/realtime?entities=articles`, { token });
    expect(stream.status).toBe(200);
    const write = (title: string) =>
      fetch(`${a.url}/api/v1/articles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title, body: 'b' }),
      }).then(async (res) => ((await res.json()) as { data: { id: string } }).data.id);
    const ids: string[] = [];
    for (let round = 0; round < 5; round++)
      ids.push(...(await Promise.all([0, 1, 2, 3].map((i) => write(`R${round}-${i}`)))));
    await stream.next((e) => e.data.id === ids.at(-1) || stream.events.length >= ids.length, 10_000);
    for (let i = 0; i < 50 && stream.events.length < ids.length; i++) await new Promise((r) => setTimeout(r, 20));
    stream.close();
    expect(stream.events.map((e) => e.data.id).sort()).toEqual([...ids].sort());
    const seqs = stream.events.map((e) => Number(e.id));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
  }, 60_000);
});
