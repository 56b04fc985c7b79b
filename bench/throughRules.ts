// A list under a rule through a reference against the same list without one: 10,000 articles
// (a reader authors 1,000 of them) and 100,000 comments. The reader holds
// `articles:view:author:{{user.id}}` and `comments:view:@article`, so its comment list is a
// subquery over the articles it may view; an administrator's list has no rule. Target: the
// rule's list within 2x of the list without it. Server on core 0, load on core 1, rounds
// interleaved, medians taken.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRegistry } from '../bin/commands/serveCommand.js';
import { signSession } from '../runtime/auth/sessionToken.js';
import { openStore } from '../runtime/store/openStore.js';
import { newId } from '../runtime/write/prepareWrite.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const SECRET = 'bench-through-secret';
const ARTICLES = Number(process.env.BENCH_THROUGH_ARTICLES ?? 10_000);
const COMMENTS = Number(process.env.BENCH_THROUGH_COMMENTS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = 3;
const PORT = 4900 + Math.floor(Math.random() * 100);

async function prepare(databaseUrl: string): Promise<{ admin: string; reader: string }> {
  const registry = await loadRegistry(root, 'generated');
  const store = await openStore(databaseUrl, root);
  await store.init(registry.model);
  const at = (i: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 1000).toISOString();
  const user = (roles: string[], i: number) => ({
    id: newId(),
    email: `through${i}@example.test`,
    displayName: `Through ${i}`,
    roles,
    authSource: 'local',
    disabled: false,
    createdAt: at(0),
    updatedAt: at(0),
  });
  const admin = user(['ADMIN'], 0);
  const reader = user(['READER'], 1);
  await store.insertMany('users', [admin, reader]);
  await store.insert('roles', {
    id: newId(),
    key: 'READER',
    label: 'Reader',
    permissions: ['articles:view:author:{{user.id}}', 'comments:view:@article'],
    isSystem: false,
    createdAt: at(0),
    updatedAt: at(0),
  });
  const articleIds: string[] = [];
  for (let start = 0; start < ARTICLES; start += 1000) {
    const batch = Array.from({ length: Math.min(1000, ARTICLES - start) }, (_, j) => {
      const i = start + j;
      const id = newId();
      articleIds.push(id);
      return {
        id,
        ownerId: admin.id,
        title: `Article ${i}`,
        slug: `article-${i}`,
        body: 'text',
        // Drafts: no one sees them by the ANONYMOUS role's view:status:published.
        status: 'draft',
        // Every tenth article is the reader's: 1,000 of 10,000, spread over the whole table.
        author: i % 10 === 0 ? reader.id : admin.id,
        views: 0,
        tags: [],
        related: [],
        createdAt: at(i),
        updatedAt: at(i),
        archivedAt: null,
      };
    });
    await store.insertMany('articles', batch);
  }
  for (let start = 0; start < COMMENTS; start += 2000) {
    const batch = Array.from({ length: Math.min(2000, COMMENTS - start) }, (_, j) => {
      const i = start + j;
      return {
        id: newId(),
        ownerId: admin.id,
        article: articleIds[(i * 7919) % articleIds.length],
        body: `Comment ${i}`,
        approved: false,
        createdAt: at(i),
        updatedAt: at(i),
        archivedAt: null,
      };
    });
    await store.insertMany('comments', batch);
  }
  await store.close();
  return { admin: signSession(SECRET, admin.id, Date.now()), reader: signSession(SECRET, reader.id, Date.now()) };
}

/** BENCH_PROFILE=DIR writes a V8 CPU profile of the server to DIR. */
const PROFILE = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];

function startServer(databaseUrl: string): Promise<ChildProcess> {
  const server = spawn(
    'taskset',
    [
      '-c',
      '0',
      process.execPath,
      ...PROFILE,
      join(here, 'crud', 'entigenServer.js'),
      databaseUrl,
      String(PORT),
      SECRET,
      root,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve) => server.stdout!.on('data', (d) => String(d).includes('listening') && resolve(server)));
}

function load(path: string, token: string): { rps: number; p99: number; failures: number } {
  const spec = {
    url: `http://127.0.0.1:${PORT}`,
    method: 'GET',
    path,
    headers: { authorization: `Bearer ${token}` },
    seconds: SECONDS,
    connections: 10,
  };
  const result = spawnSync(
    'taskset',
    ['-c', '1', process.execPath, join(here, 'crud', 'load.js'), JSON.stringify(spec)],
    {
      encoding: 'utf8',
    },
  );
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const databaseUrl = `sqlite:${join(mkdtempSync(join(tmpdir(), 'entigen-through-')), 'through.db')}`;
  const started = Date.now();
  const tokens = await prepare(databaseUrl);
  console.log(`through: seeded ${ARTICLES} articles and ${COMMENTS} comments in ${Date.now() - started} ms`);
  const server = await startServer(databaseUrl);
  const path = '/api/v1/comments?limit=25';
  const plain: number[] = [];
  const ruled: number[] = [];
  const p99s = { plain: [] as number[], ruled: [] as number[] };
  load(path, tokens.admin);
  load(path, tokens.reader);
  for (let round = 0; round < ROUNDS; round++) {
    const a = load(path, tokens.admin);
    const b = load(path, tokens.reader);
    if (a.failures + b.failures > 0) throw new Error(`failed requests: ${a.failures + b.failures}`);
    plain.push(a.rps);
    ruled.push(b.rps);
    p99s.plain.push(a.p99);
    p99s.ruled.push(b.p99);
    console.log(
      `  round ${round + 1}: without the rule ${Math.round(a.rps)} req/s, through the rule ${Math.round(b.rps)} req/s`,
    );
  }
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  const ratio = median(plain) / median(ruled);
  console.log(
    `through: list of comments (limit 25, with totalCount) without a rule ${Math.round(median(plain))} req/s (p99 ${median(p99s.plain)} ms), through @article ${Math.round(median(ruled))} req/s (p99 ${median(p99s.ruled)} ms): the rule costs x${ratio.toFixed(2)} (target: at most x2)`,
  );
  process.exit(0);
}

await main();
