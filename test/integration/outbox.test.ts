import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, servableApp } from '../support/cli.js';
import { adminToken, type SpawnedServer, spawnServer } from '../support/spawnServer.js';

// A project like a user's: the example app with an afterCommit hook that appends each event it
// hears to EVENTS_FILE (after HOOK_DELAY_MS, so a backlog builds up under load).
const HOOK = `import { appendFileSync } from 'node:fs';
import { defineHooks } from '../generated/hooks.js';

export default defineHooks('articles', {
  async afterCommit({ event, id, seq }) {
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.HOOK_DELAY_MS ?? 0)));
    appendFileSync(process.env.EVENTS_FILE!, \`\${event} \${id} \${seq}\\n\`);
  },
});
`;

let app: string;
beforeAll(async () => {
  app = servableApp();
  mkdirSync(join(app, 'hooks'), { recursive: true });
  writeFileSync(join(app, 'hooks', 'articles.ts'), HOOK);
  const built = await runCli(['build'], app);
  expect(built.status, built.stderr).toBe(0);
});

const running: SpawnedServer[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) s.child.kill('SIGKILL');
});
const start = async (env: Record<string, string>) => {
  const server = await spawnServer(env, app);
  running.push(server);
  return server;
};

async function createArticle(url: string, token: string, title: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${url}/api/v1/articles`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ title, body: 'b' }),
    });
    return res.status === 201 ? ((await res.json()) as { data: { id: string } }).data.id : undefined;
  } catch {
    return undefined; // the server was killed mid-request: not committed as far as we know
  }
}

/** `created <id>` lines of the events files. */
const createdIds = (files: string[]) =>
  files
    .filter((file) => existsSync(file))
    .flatMap((file) => readFileSync(file, 'utf8').split('\n'))
    .filter((line) => line.startsWith('created '))
    .map((line) => line.split(' ')[1]);

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 100));
}

describe('afterCommit from the durable event log, with real server processes', () => {
  it('delivers every committed write after a kill -9 under load', { timeout: 90_000 }, async () => {
    const dir = join(app, 'data', randomUUID());
    mkdirSync(dir, { recursive: true });
    const events = join(dir, 'events.log');
    const env = { DATABASE_URL: `sqlite:${join(dir, 'app.db')}`, EVENTS_FILE: events, HOOK_DELAY_MS: '40' };
    const first = await start(env);
    const token = await adminToken(first.url);
    const committed: string[] = [];
    let writing = true;
    const writers = Array.from({ length: 6 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const id = await createArticle(first.url, token, `w${w}-${i}`);
        if (id) committed.push(id);
      }
    });
    await until(() => committed.length >= 60, 20_000);
    first.child.kill('SIGKILL');
    writing = false;
    await Promise.all(writers);
    await first.exited;
    // The kill left a backlog: events committed but not yet handed to the hook.
    const deliveredAtKill = new Set(createdIds([events]));
    expect(committed.filter((id) => !deliveredAtKill.has(id)).length).toBeGreaterThan(0);

    await start({ ...env, HOOK_DELAY_MS: '0' });
    // The killed instance's lease on the cursor (30 s from its last renewal) must run out first.
    await until(() => committed.every((id) => createdIds([events]).includes(id)), 45_000);
    const delivered = new Set(createdIds([events]));
    expect(committed.filter((id) => !delivered.has(id))).toEqual([]);
  });

  it('delivers each event once between two instances on one PostgreSQL database', async () => {
    const schema = `outbox_${randomUUID().replace(/-/g, '')}`;
    const database = `postgres://postgres@127.0.0.1:5432/test?schema=${schema}`;
    const dir = join(app, 'data', randomUUID());
    mkdirSync(dir, { recursive: true });
    const files = [join(dir, 'a.log'), join(dir, 'b.log')];
    const a = await start({ DATABASE_URL: database, EVENTS_FILE: files[0], HOOK_DELAY_MS: '5' });
    const b = await start({ DATABASE_URL: database, EVENTS_FILE: files[1], HOOK_DELAY_MS: '5' });
    const token = await adminToken(a.url);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const id = await createArticle(i % 2 ? a.url : b.url, token, `pg-${i}`);
      expect(id).toBeDefined();
      ids.push(id!);
    }
    await until(() => ids.every((id) => createdIds(files).includes(id)), 30_000);
    const seen = createdIds(files);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen.length).toBe(ids.length);
  });
});
