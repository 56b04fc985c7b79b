import { afterAll, describe, expect, it } from 'vitest';
import { type PrivatePostgres, startPrivatePostgres } from '../support/privatePostgres.js';
import { ADMIN_ENV, type SpawnedServer, spawnServer } from '../support/spawnServer.js';

let pg: PrivatePostgres | undefined;
let server: SpawnedServer | undefined;
afterAll(() => {
  server?.child.kill('SIGKILL');
  try {
    pg?.stop();
  } catch {
    // already stopped
  }
});

describe('losing the database', () => {
  it('answers 503 while PostgreSQL is away, recovers by itself, and keeps every write that got a 2xx', async () => {
    pg = await startPrivatePostgres();
    server = await spawnServer({ DATABASE_URL: pg.url });
    const login = await fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADMIN_ENV.ENTIGEN_ADMIN_EMAIL, password: ADMIN_ENV.ENTIGEN_ADMIN_PASSWORD }),
    });
    const { token } = (await login.json()) as { token: string };
    const acknowledged: string[] = [];
    const statuses: number[] = [];
    let n = 0;
    const write = async () => {
      const res = await fetch(`${server!.url}/api/v1/articles`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ title: `During ${n++}`, body: 'b' }),
      });
      statuses.push(res.status);
      if (res.status === 201) acknowledged.push(((await res.json()) as { data: { id: string } }).data.id);
    };
    for (let i = 0; i < 20; i++) await write();
    pg.stop();
    for (let i = 0; i < 10; i++) await write();
    const health = await fetch(`${server.url}/api/health`);
    expect(health.status).toBe(503);
    expect(statuses.slice(20)).toEqual(Array(10).fill(503));
    pg.start();
    let recovered = false;
    for (let i = 0; i < 50 && !recovered; i++) {
      await write();
      recovered = statuses.at(-1) === 201;
      if (!recovered) await new Promise((r) => setTimeout(r, 200));
    }
    expect(recovered).toBe(true);
    for (let i = 0; i < 10; i++) await write();
    expect(statuses.every((s) => s === 201 || s === 503)).toBe(true);
    const res = await fetch(`${server.url}/api/v1/articles?limit=200&select=title`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const stored = ((await res.json()) as { data: { items: { id: string }[] } }).data.items.map((item) => item.id);
    expect(stored).toEqual(expect.arrayContaining(acknowledged));
    expect(acknowledged.length).toBeGreaterThanOrEqual(31);
  }, 120_000);
});
