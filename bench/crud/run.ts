// CRUD throughput of the full entigen pipeline against a hand-written Express 5 + better-sqlite3
// baseline (and Soul, a REST-over-SQLite peer, when installed), on the same seeded data.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { loadRegistry } from '../../bin/commands/serveCommand.js';
import { SERVE_ENV, SERVE_NODE_FLAGS } from '../../bin/commands/serverHeap.js';
import { signSession } from '../../runtime/auth/sessionToken.js';
import { openStore } from '../../runtime/store/openStore.js';
import { type CoreShares, withCpuPerRequest } from '../procStat.js';
import { RECORDS, seed } from './seed.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** BENCH_RUNS=7 takes the median of more rounds (3 by default). */
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** BENCH_CASES=get,list,create picks cases; BENCH_TARGETS=entigen,baseline,soul picks servers. */
const CASES = [
  'get by id',
  'list',
  'get by id compressed',
  'list compressed',
  'cursor page',
  'range list',
  'aggregate',
  'aggregate-mixed',
  'create',
].filter((name) => !process.env.BENCH_CASES || process.env.BENCH_CASES.split(',').some((c) => name.startsWith(c)));
/** BENCH_SETTLE_SECONDS: how long after the run the servers' RSS is read a second time (10 by default). */
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const CONNECTIONS = 10;
/**
 * BENCH_PAIRED=1: each round loads every server at once, all on core 0, so a change in this
 * shared machine's speed (it can halve within seconds) reaches each alike; a comparison is then
 * the median of the rounds' own ratios, each the ratio of what two servers did with equal shares
 * of one core. For small differences (a change of a few percent) under a noisy host.
 */
const PAIRED = process.env.BENCH_PAIRED === '1';
const SECRET = 'bench-secret';
const SOUL = join(root, '.bench-tmp', 'soul', 'node_modules', 'soul-cli', 'src', 'server.js');
/** BENCH_PROFILE=DIR writes V8 CPU profiles of the entigen and baseline servers to DIR (open it in Chrome DevTools). */
const PROFILE = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
/**
 * BENCH_COMPARE=DIR adds entigen as built in another checkout (DIR, after its `npm run build:ts`)
 * as the target `before`, side by side with this one: on its own seeded copy of the same data,
 * in its own schema. `git worktree add ../before <commit>` gives such a checkout.
 * BENCH_COMPARE=. with BENCH_COMPARE_FLAGS compares this checkout with itself under other V8 flags,
 * or with BENCH_COMPARE_ENV (`NAME=value ...`) under another environment.
 */
const COMPARE = process.env.BENCH_COMPARE ? resolve(process.env.BENCH_COMPARE) : undefined;
const COMPARE_ENV = Object.fromEntries(
  (process.env.BENCH_COMPARE_ENV ?? '')
    .split(' ')
    .filter(Boolean)
    .map((assignment) => [assignment.slice(0, assignment.indexOf('=')), assignment.slice(assignment.indexOf('=') + 1)]),
);
const PG_URL =
  process.env.BENCH_STORE === 'postgres'
    ? `postgres://postgres@127.0.0.1:5432/test?schema=bench_${Date.now()}`
    : undefined;
/** With BENCH_COMPARE and BENCH_STORE=postgres, the other checkout also runs on PostgreSQL (`before-pg`), in a schema of its own. */
const PG_BEFORE_URL = PG_URL && COMPARE ? PG_URL.replace('?schema=bench_', '?schema=bench_before_') : undefined;

interface Target {
  name:
    | 'entigen'
    | 'entigen-pg'
    | 'entigen-node'
    | 'before'
    | 'before-pg'
    | 'baseline'
    | 'baseline-born'
    | 'bare'
    | 'soul';
  /** Runs only when BENCH_TARGETS names it. */
  optIn?: boolean;
  start(db: string, port: number): ChildProcess;
  /** The checkout whose seed this target needs (BENCH_COMPARE); by default this one's. */
  checkout?: string;
  paths: {
    get: string;
    list?: string;
    create?: string;
    createBody?: string;
    rangeList?: string;
    aggregate?: string;
    /** `{cursor}`: replaced by the target's own cursor past the first page. */
    cursorPage?: string;
  };
}

const ENTIGEN_PATHS = {
  get: '/api/v1/articles/{id}',
  list: '/api/v1/articles?kind=news&sort=-views&limit=25',
  // A week of the seeded articles (about 10,000 of 100,000), the most viewed first, with the total.
  rangeList: '/api/v1/articles?dateFrom=2025-12-01&dateTo=2025-12-07&sort=-views&limit=25',
  // Published articles per kind, with the sum of their views.
  aggregate: '/api/v1/articles/aggregate?groupBy=kind&sum=views&status=published',
  // 50 records after a cursor, with the total: its cost must not grow with the table.
  cursorPage: '/api/v1/articles?limit=50&cursor={cursor}',
  create: '/api/v1/articles',
  createBody: JSON.stringify({ title: 'New article', body: 'Some body text' }),
};
/** The core the servers run on (the load generator has the next one). */
const SERVER_CORE = 0;
const pinned = (core: number, args: string[], env: NodeJS.ProcessEnv = process.env, cwd = root) =>
  spawn('taskset', ['-c', String(core), process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env, cwd });

/** entigen's bench server as built in a checkout (this one unless BENCH_COMPARE), on the database given. */
const entigenServer = (
  database: string,
  port: number,
  checkout = root,
  env: NodeJS.ProcessEnv = process.env,
  flags = process.env.BENCH_SERVER_FLAGS,
) =>
  pinned(
    SERVER_CORE,
    [
      ...PROFILE,
      // As `entigen serve` runs; BENCH_SERVER_FLAGS come after, so they can override these.
      ...SERVE_NODE_FLAGS,
      ...(flags?.split(' ').filter(Boolean) ?? []),
      join(checkout, 'dist', 'bench', 'crud', 'entigenServer.js'),
      database,
      String(port),
      SECRET,
      checkout,
    ],
    // As `entigen serve` starts; one set in the bench's own environment takes its place.
    { ...SERVE_ENV, ...env },
    checkout,
  );

const TARGETS: Target[] = [
  {
    name: 'entigen',
    start: (db, port) => entigenServer(`sqlite:${db}`, port),
    paths: ENTIGEN_PATHS,
  },
  ...(PG_URL
    ? [
        {
          // BENCH_STORE=postgres adds the same server on PostgreSQL, holding the same rows.
          name: 'entigen-pg' as const,
          start: (_db: string, port: number) => entigenServer(PG_URL, port),
          paths: ENTIGEN_PATHS,
        },
      ]
    : []),
  {
    // The same server on the node:http adapter (server.adapter: node), the adapter's own case.
    name: 'entigen-node',
    start: (db, port) => entigenServer(`sqlite:${db}`, port, root, { ...process.env, HTTP_ADAPTER: 'node' }),
    paths: ENTIGEN_PATHS,
  },
  ...(COMPARE
    ? [
        {
          name: 'before' as const,
          checkout: COMPARE,
          start: (db: string, port: number) =>
            entigenServer(
              `sqlite:${db}`,
              port,
              COMPARE,
              { ...process.env, ...COMPARE_ENV },
              process.env.BENCH_COMPARE_FLAGS ?? process.env.BENCH_SERVER_FLAGS,
            ),
          paths: ENTIGEN_PATHS,
        },
      ]
    : []),
  ...(COMPARE && PG_BEFORE_URL
    ? [
        {
          name: 'before-pg' as const,
          checkout: COMPARE,
          start: (_db: string, port: number) =>
            entigenServer(
              PG_BEFORE_URL,
              port,
              COMPARE,
              { ...process.env, ...COMPARE_ENV },
              process.env.BENCH_COMPARE_FLAGS ?? process.env.BENCH_SERVER_FLAGS,
            ),
          paths: ENTIGEN_PATHS,
        },
      ]
    : []),
  {
    name: 'baseline',
    start: (db, port) => pinned(SERVER_CORE, [...PROFILE, join(here, 'baselineServer.js'), db, String(port), SECRET]),
    paths: ENTIGEN_PATHS,
  },
  {
    // Opt-in (BENCH_TARGETS=...,baseline-born): the baseline with entigen's born-with-prototypes server.
    name: 'baseline-born',
    optIn: true,
    start: (db, port) =>
      pinned(SERVER_CORE, [...PROFILE, join(here, 'baselineServer.js'), db, String(port), SECRET], {
        ...process.env,
        BASELINE_BORN: '1',
      }),
    paths: ENTIGEN_PATHS,
  },
  {
    // Only GET by id: the floor of node:http itself (bareServer.ts): the ceiling an adapter could reach.
    name: 'bare',
    start: (db, port) => pinned(SERVER_CORE, [...PROFILE, join(here, 'bareServer.js'), db, String(port), SECRET]),
    paths: { get: ENTIGEN_PATHS.get },
  },
  {
    name: 'soul',
    start: (db, port) => pinned(SERVER_CORE, [SOUL, '-d', db, '-p', String(port)]),
    paths: {
      get: '/api/tables/articles/rows/{id}',
      list: '/api/tables/articles/rows?_filters=kind:news,archivedAt__null&_ordering=-views&_limit=25',
      create: '/api/tables/articles/rows',
      createBody: JSON.stringify({
        fields: {
          id: '{newId}',
          title: 'New article',
          body: 'Some body text',
          ownerId: 'x',
          createdAt: 'now',
          updatedAt: 'now',
        },
      }),
    },
  },
];

/** Whether anything answers at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url);
    return true;
  } catch {
    return false;
  }
}

async function waitUntilUp(url: string, child: ChildProcess): Promise<void> {
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`server did not start: ${output}`);
}

/** The V8 heap of an entigen bench server (it answers SIGUSR2 on stdout), as text for the RSS line. */
async function heapOf(child: ChildProcess): Promise<string> {
  const answer = new Promise<string>((resolve) => {
    let text = '';
    const listen = (chunk: Buffer) => {
      text += chunk;
      const line = /memory (\{.*\})/.exec(text)?.[1];
      if (!line) return;
      child.stdout!.off('data', listen);
      const m = JSON.parse(line) as Record<string, number>;
      const mb = (n: number) => Math.round(n / 1048576);
      const after = m.after as unknown as { rss: number; heapTotal: number } | undefined;
      const live =
        m.live === undefined
          ? ''
          : `, ${mb(m.live)} MB live; after a full collection RSS ${mb(after!.rss)} MB, heap ${mb(after!.heapTotal)} MB`;
      resolve(`; V8 heap ${mb(m.heapUsed)} of ${mb(m.heapTotal)} MB${live}, external ${mb(m.external)} MB`);
    };
    child.stdout!.on('data', listen);
    setTimeout(() => resolve(''), 2000).unref();
  });
  child.kill('SIGUSR2');
  return answer;
}

interface LoadResult {
  rps: number;
  p99: number;
  failures: number;
  total: number;
}

/**
 * Holds PostgreSQL's backends of this run (the servers' pooled connections, open once the warm-up
 * has run) to the load's core, core 1. Left to the scheduler they settle on either core once per
 * run, and runs of the same code then differ by up to 0.05x while the rounds of each agree.
 * Without the right to move another user's processes (a bench not run as root) the run goes on
 * with them where they are, and says so.
 */
async function holdPostgresBackends(url: string): Promise<void> {
  let pids: number[] = [];
  await inSchema(url, async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    pids = rows.map((row) => row.pid);
  });
  const refused = pids.filter(
    (pid) => spawnSync('taskset', ['-p', '-c', '1', String(pid)], { stdio: 'ignore' }).status !== 0,
  );
  if (refused.length > 0)
    process.stdout.write(
      `PostgreSQL: ${refused.length} of ${pids.length} backends left where the scheduler put them (taskset refused)\n`,
    );
}

/**
 * Writes every dirty page of the machine to disk (sync(1)) and waits for it. Before each round:
 * a server that writes without an fsync (Soul) leaves its pages for the kernel to write back some
 * 30 s later, and so does the copying of the seeds; that writeback, and the cache flush of the
 * disk that follows it, would land in whichever later round it meets, and only a server that
 * waits for its own fsyncs would feel it. Each round starts on a disk with nothing left to write.
 */
function settleDisk(): void {
  if (process.env.BENCH_SYNC === '0') return;
  spawnSync('sync', [], { stdio: 'ignore' });
}

/** The load generator's command line: load.ts on core 1. */
const loadCommand = (spec: object) => ['-c', '1', process.execPath, join(here, 'load.js'), JSON.stringify(spec)];
/** The load generator's result: the last line it printed. */
const loadResult = (output: string): LoadResult => JSON.parse(output.trim().split('\n').at(-1)!);

/** One load run in the background (the paired rounds start one per server). */
function loadInBackground(spec: object): Promise<LoadResult> {
  return new Promise((done, fail) => {
    const child = spawn('taskset', loadCommand(spec), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk));
    child.on('exit', (code) => (code === 0 ? done(loadResult(output)) : fail(new Error(errors))));
  });
}

function load(spec: object): LoadResult {
  const result = spawnSync('taskset', loadCommand(spec), { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return loadResult(result.stdout);
}

/** The seeded SQLite rows, copied as they are into PostgreSQL so both hold the same data. */
async function copyToPostgres(
  sqlitePath: string,
  url: string,
  registry: Awaited<ReturnType<typeof loadRegistry>>,
): Promise<void> {
  const source = await openStore(`sqlite:${sqlitePath}`, root);
  const target = await openStore(url, root);
  await source.init(registry.model);
  await target.init(registry.model);
  for (const collection of ['users', 'articles']) {
    for (let skip = 0; ; skip += 5000) {
      const docs = await source.find(collection, { sort: [{ field: 'id', direction: 'asc' }], skip, limit: 5000 });
      if (docs.length === 0) break;
      await target.insertMany(collection, docs);
    }
  }
  await source.close();
  await target.close();
  // The statistics PostgreSQL's autovacuum gathers within a minute of a bulk load (this machine
  // runs PostgreSQL with autovacuum off): without them the planner takes the tables for empty.
  await inSchema(url, async (client, schema) => {
    for (const table of ['users', 'articles']) await client.query(`ANALYZE "${schema}"."${table}"`);
  });
}

/** Runs `fn` on a connection of its own to the database of `url`, naming the schema `url` names. */
async function inSchema(url: string, fn: (client: pg.Client, schema: string) => Promise<void>): Promise<void> {
  const { pathname, searchParams } = new URL(url);
  const client = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: pathname.slice(1) });
  await client.connect();
  try {
    await fn(client, searchParams.get('schema') ?? 'public');
  } finally {
    await client.end();
  }
}

interface SampledSeed {
  db: string;
  /** Every 97th article id, for GET by id. */
  idsFile: string;
  headers: Record<string, string>;
}

/** A seeded database with its sample of ids and an admin's session for the requests. */
function sampled(
  dir: string,
  name: string,
  seeded: { db: string; adminId: string; articleIds: string[] },
): SampledSeed {
  const idsFile = join(dir, `${name}-ids.json`);
  writeFileSync(idsFile, JSON.stringify(seeded.articleIds.filter((_, i) => i % 97 === 0)));
  const token = signSession(SECRET, seeded.adminId, Date.now());
  return { db: seeded.db, idsFile, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } };
}

/** Seeds a database with another checkout's own code and schema (BENCH_COMPARE), in a process of its own. */
function seedCheckout(dir: string, checkout: string): { db: string; adminId: string; articleIds: string[] } {
  const db = join(dir, 'before-seed.db');
  process.stdout.write(`seeding articles with ${checkout}...\n`);
  const script = `
    const { loadRegistry } = await import(${JSON.stringify(pathToFileURL(join(checkout, 'dist', 'bin', 'commands', 'serveCommand.js')).href)});
    const { seed } = await import(${JSON.stringify(pathToFileURL(join(checkout, 'dist', 'bench', 'crud', 'seed.js')).href)});
    const seeded = await seed(${JSON.stringify(`sqlite:${db}`)}, await loadRegistry(${JSON.stringify(checkout)}, 'generated'));
    process.stdout.write(JSON.stringify(seeded));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: checkout,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`seeding with ${checkout} failed: ${result.stderr}`);
  return { db, ...(JSON.parse(result.stdout) as { adminId: string; articleIds: string[] }) };
}

/** The throughput each case should reach against the baseline (0.8 where none is named). */
const TARGET_RATIOS: Record<string, number> = {
  'get by id': 0.9,
  create: 0.7,
  'range list': 2,
  aggregate: 10,
  'aggregate-mixed': 5,
};

const COMPRESSED = ' compressed';

/** The chosen cases in the order they run: each with its compressed twin, so the two interleave. */
function caseGroups(): string[][] {
  const groups = CASES.filter((name) => !name.endsWith(COMPRESSED)).map((name) =>
    CASES.includes(`${name}${COMPRESSED}`) ? [name, `${name}${COMPRESSED}`] : [name],
  );
  const alone = CASES.filter((name) => name.endsWith(COMPRESSED) && !CASES.includes(name.slice(0, -COMPRESSED.length)));
  return [...groups, ...alone.map((name) => [name])];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'entigen-bench-crud-'));
  const seeded = join(dir, 'seed.db');
  process.stdout.write(`seeding ${RECORDS} articles...\n`);
  const registry = await loadRegistry(root, 'generated');
  const { adminId, articleIds } = await seed(`sqlite:${seeded}`, registry);
  if (PG_URL) {
    process.stdout.write('seeding the same articles into PostgreSQL...\n');
    await copyToPostgres(seeded, PG_URL, registry);
  }
  const ownSeed = sampled(dir, 'seed', { db: seeded, adminId, articleIds });
  const results = new Map<
    string,
    { rps: number; p99: number; failures: number; cpuMicros?: number; rounds: number[] }
  >();

  const only = process.env.BENCH_TARGETS?.split(',');
  const targets = TARGETS.filter(
    (t) => (t.name !== 'soul' || existsSync(SOUL)) && (only ? only.includes(t.name) : !t.optIn),
  );
  const running: { target: Target; url: string; child: ChildProcess; seed: SampledSeed }[] = [];
  // However the run ends, its servers end with it: one left behind would answer the next run.
  process.on('exit', () => {
    for (const { child } of running) if (child.exitCode === null) child.kill('SIGTERM');
  });
  for (const target of targets) {
    const seedOf = target.checkout ? sampled(dir, target.name, seedCheckout(dir, target.checkout)) : ownSeed;
    if (target.name === 'before-pg' && PG_BEFORE_URL) {
      process.stdout.write('seeding the same articles into PostgreSQL for before-pg...\n');
      await copyToPostgres(seedOf.db, PG_BEFORE_URL, registry);
    }
    const db = join(dir, `${target.name}.db`);
    copyFileSync(seedOf.db, db);
    const port = 4100 + targets.indexOf(target);
    const url = `http://127.0.0.1:${port}`;
    if (await answers(url)) throw new Error(`port ${port} is taken (a server of an earlier run?): stop it first`);
    const child = target.start(db, port);
    running.push({ target, url, child, seed: seedOf });
    await waitUntilUp(url, child);
  }
  // Each server's cursor after the first page of 50: entigen's own signed one, the baseline's the
  // last id of that page (ids grow with creation, so the 50th newest).
  const cursors = new Map<string, string>([['baseline', [...articleIds].sort().reverse()[49]]]);
  for (const {
    target,
    url,
    seed: { headers },
  } of running) {
    if (!target.name.startsWith('entigen') && !target.checkout) continue;
    const answer = await fetch(`${url}/api/v1/articles?limit=50`, { headers });
    const first = (await answer.json()) as { data?: { nextCursor?: string } };
    if (!first.data)
      throw new Error(`${target.name}: the first page answered ${answer.status} ${JSON.stringify(first)}`);
    cursors.set(target.name, encodeURIComponent(first.data.nextCursor ?? ''));
  }
  interface BenchCase {
    name: string;
    method: string;
    path?: string;
    idsFile?: string;
    body?: string;
    encoding?: string;
    mix?: { every: number; method: 'POST'; path: string; body: string };
  }
  const casesOf = (target: Target, { idsFile, headers }: SampledSeed) =>
    (
      [
        { name: 'get by id', method: 'GET', path: target.paths.get, idsFile },
        { name: 'list', method: 'GET', path: target.paths.list },
        // As browsers ask: brotli preferred, gzip accepted (answers under 1 KB stay as they are).
        { name: 'get by id compressed', method: 'GET', path: target.paths.get, idsFile, encoding: 'gzip, deflate, br' },
        { name: 'list compressed', method: 'GET', path: target.paths.list, encoding: 'gzip, deflate, br' },
        {
          name: 'cursor page',
          method: 'GET',
          path: target.paths.cursorPage?.replace('{cursor}', cursors.get(target.name) ?? ''),
        },
        { name: 'range list', method: 'GET', path: target.paths.rangeList },
        { name: 'aggregate', method: 'GET', path: target.paths.aggregate },
        // Dashboards between writes: one create after every ten aggregates, on each connection.
        {
          name: 'aggregate-mixed',
          method: 'GET',
          path: target.paths.create ? target.paths.aggregate : undefined,
          mix: { every: 10, method: 'POST', path: target.paths.create ?? '', body: target.paths.createBody ?? '{}' },
        },
        { name: 'create', method: 'POST', path: target.paths.create, body: target.paths.createBody },
      ] as BenchCase[]
    )
      .filter((c): c is BenchCase & { path: string } => c.path !== undefined)
      .map(({ encoding, ...item }) => ({
        ...item,
        headers: { ...headers, ...(encoding ? { 'accept-encoding': encoding } : {}) },
      }));
  try {
    for (const group of caseGroups()) {
      const runs = new Map<string, (LoadResult & { cpuMicros?: number; coreShares?: CoreShares })[]>();
      for (const caseName of group)
        for (const { target, url, seed } of running) {
          const item = casesOf(target, seed).find((c) => c.name === caseName);
          if (item) load({ url, seconds: WARMUP_SECONDS, connections: CONNECTIONS, ...item });
        }
      if (PG_URL) await holdPostgresBackends(PG_URL);
      // Rounds interleave the servers, and a case with its compressed twin, so drift of this shared
      // machine hits each alike. Each round starts with the next server: the one after a server
      // that writes without an fsync would otherwise always meet the disk's writeback of its pages.
      for (let round = 0; round < RUNS; round++) {
        const order = [...running.slice(round % running.length), ...running.slice(0, round % running.length)];
        if (PAIRED) {
          for (const caseName of group) {
            settleDisk();
            const loads = order.flatMap(({ target, url, seed }) => {
              const item = casesOf(target, seed).find((c) => c.name === caseName);
              return item ? [{ key: `${target.name}/${caseName}`, url, item }] : [];
            });
            const answers = await Promise.all(
              loads.map(({ url, item }) =>
                loadInBackground({ url, seconds: SECONDS, connections: CONNECTIONS, ...item }),
              ),
            );
            for (const [i, { key }] of loads.entries()) runs.set(key, [...(runs.get(key) ?? []), answers[i]!]);
          }
          continue;
        }
        for (const caseName of group)
          for (const { target, url, seed, child } of order) {
            const item = casesOf(target, seed).find((c) => c.name === caseName);
            if (!item) continue;
            settleDisk();
            const result = withCpuPerRequest(
              child.pid,
              () => load({ url, seconds: SECONDS, connections: CONNECTIONS, ...item }),
              SERVER_CORE,
            );
            const key = `${target.name}/${caseName}`;
            runs.set(key, [...(runs.get(key) ?? []), result]);
          }
      }
      for (const [key, list] of runs) {
        const [name, caseName] = key.split('/');
        const cpu = list.flatMap((r) => (r.cpuMicros === undefined ? [] : [r.cpuMicros]));
        const result = {
          rps: median(list.map((r) => r.rps)),
          p99: median(list.map((r) => r.p99)),
          failures: list.reduce((n, r) => n + r.failures, 0),
          cpuMicros: cpu.length > 0 ? median(cpu) : undefined,
          rounds: list.map((r) => r.rps),
        };
        results.set(key, result);
        const cpuText = result.cpuMicros === undefined ? '' : `  cpu ${result.cpuMicros.toFixed(0)} µs/req`;
        const shares = list.flatMap((r) => (r.coreShares ? [r.coreShares] : []));
        const percent = (pick: (s: CoreShares) => number) => `${(100 * median(shares.map(pick))).toFixed(0)}%`;
        // Where the server's core went: what it did not spend busy, its clients spent waiting on it.
        const coreText =
          shares.length === 0
            ? ''
            : `  core ${percent((s) => s.busy)} busy, ${percent((s) => s.ioWait)} disk wait, ${percent((s) => s.idle)} idle`;
        process.stdout.write(
          `${name.padEnd(9)} ${caseName.padEnd(10)} ${result.rps.toFixed(0).padStart(7)} req/s  p99 ${String(result.p99).padStart(4)} ms${cpuText}${coreText}  failures ${result.failures}  (rounds ${list.map((r) => r.rps.toFixed(0)).join(' ')})\n`,
        );
      }
    }
    const statusOf = (pid: number | undefined) =>
      existsSync(`/proc/${pid}/status`) ? readFileSync(`/proc/${pid}/status`, 'utf8') : '';
    const mbOf = (status: string, field: string) =>
      Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]) / 1024);
    const rightAfter = running.map(({ child }) => statusOf(child.pid));
    // Then the same servers once the load has been gone a while: what a server holds, not what
    // the last seconds of load left for the collector.
    await new Promise((settled) => setTimeout(settled, SETTLE_SECONDS * 1000));
    for (const [i, { target, child }] of running.entries()) {
      const heap = target.name.startsWith('entigen') ? await heapOf(child) : '';
      const status = statusOf(child.pid);
      const mb = (field: string) => mbOf(status, field);
      if (/VmRSS:/.test(status))
        process.stdout.write(
          `${target.name.padEnd(9)} server RSS right after the run: ${mbOf(rightAfter[i]!, 'VmRSS')} MB; ${SETTLE_SECONDS} s later ${mb('VmRSS')} MB (${RECORDS} records; anonymous ${mb('RssAnon')} MB, files ${mb('RssFile')} MB${heap})\n`,
        );
    }
  } finally {
    await Promise.all(
      running.map(
        ({ child }) =>
          new Promise((exited) => {
            child.once('exit', exited);
            child.kill('SIGTERM');
          }),
      ),
    );
    // The copy of the rows is gigabytes at a million: it goes with the run, as do the SQLite files
    // (a seed and a copy per target, hundreds of megabytes each at 100,000 rows).
    for (const url of [PG_URL, PG_BEFORE_URL])
      if (url)
        await inSchema(
          url,
          async (client, schema) => void (await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)),
        );
    rmSync(dir, { recursive: true, force: true });
  }

  process.stdout.write(
    `\nratios (median of ${RUNS} runs of ${SECONDS}s, ${CONNECTIONS} connections, servers on core 0, load${PG_URL ? ' and PostgreSQL' : ''} on core 1, ${PAIRED ? 'servers loaded together, ratios taken round by round' : 'rounds interleaved'}):\n`,
  );
  for (const item of CASES) {
    const e = results.get(`entigen/${item}`);
    const b = results.get(`baseline/${item}`);
    if (!e || !b) continue;
    const s = results.get(`soul/${item}`);
    const target = TARGET_RATIOS[item] ?? 0.8;
    const line = [
      `${item.padEnd(10)} throughput ${(e.rps / b.rps).toFixed(2)}x baseline (target >= ${target})`,
      `p99 ${(e.p99 / Math.max(b.p99, 1)).toFixed(2)}x baseline (target <= 1.5)`,
      s
        ? `${(e.rps / s.rps).toFixed(2)}x Soul (target >= 1.5)`
        : 'Soul not measured (not installed, or BENCH_TARGETS left it out)',
    ];
    process.stdout.write(`  ${line.join(', ')}\n`);
  }
  for (const item of CASES) {
    if (!item.endsWith(COMPRESSED)) continue;
    const plain = results.get(`entigen/${item.slice(0, -COMPRESSED.length)}`);
    const compressed = results.get(`entigen/${item}`);
    if (plain && compressed)
      process.stdout.write(
        `  ${item.padEnd(10)} ${(compressed.rps / plain.rps).toFixed(2)}x the throughput of the same answers uncompressed (target >= 0.9)\n`,
      );
  }
  for (const item of CASES) {
    const n = results.get(`entigen-node/${item}`);
    const e = results.get(`entigen/${item}`);
    const b = results.get(`baseline/${item}`);
    if (n && b && e)
      process.stdout.write(
        `  ${item.padEnd(10)} node adapter ${(n.rps / b.rps).toFixed(2)}x baseline, ${(n.rps / e.rps).toFixed(2)}x entigen on Express${item === 'get by id' ? ' (target: at least 3x baseline)' : ''}\n`,
      );
  }
  for (const item of CASES) {
    const pg = results.get(`entigen-pg/${item}`);
    const e = results.get(`entigen/${item}`);
    if (pg && e)
      process.stdout.write(
        `  ${item.padEnd(10)} PostgreSQL store ${pg.rps.toFixed(0)} req/s, ${(pg.rps / e.rps).toFixed(2)}x the SQLite store${item === 'create' ? ' (target: at least 1,000 req/s)' : ' (target >= 0.5)'}\n`,
      );
  }
  // Paired rounds are compared round by round: each round's two servers met the same machine.
  const ratio = (a: { rps: number; rounds: number[] }, b: { rps: number; rounds: number[] }) =>
    PAIRED ? median(a.rounds.map((rps, i) => rps / b.rounds[i]!)) : a.rps / b.rps;
  for (const item of CASES)
    for (const [mine, theirs, store] of [
      ['entigen', 'before', ''],
      ['entigen-pg', 'before-pg', ' on PostgreSQL'],
    ]) {
      const before = results.get(`${theirs}/${item}`);
      const e = results.get(`${mine}/${item}`);
      if (before && e)
        process.stdout.write(
          `  ${item.padEnd(10)} ${ratio(e, before).toFixed(2)}x the throughput of ${COMPARE}${store} (BENCH_COMPARE), p99 ${(e.p99 / Math.max(before.p99, 1)).toFixed(2)}x${e.cpuMicros && before.cpuMicros ? `, CPU per request ${(e.cpuMicros / before.cpuMicros).toFixed(2)}x` : ''}\n`,
        );
    }
  for (const item of CASES) {
    const born = results.get(`baseline-born/${item}`);
    const b = results.get(`baseline/${item}`);
    const e = results.get(`entigen/${item}`);
    if (born && b && e)
      process.stdout.write(
        `  ${item.padEnd(10)} baseline on a born-with-prototypes server ${(born.rps / b.rps).toFixed(2)}x the baseline; entigen ${(e.rps / born.rps).toFixed(2)}x it\n`,
      );
  }
  const bare = results.get('bare/get by id');
  const baseline = results.get('baseline/get by id');
  if (bare && baseline)
    process.stdout.write(
      `  floor: bare node:http answers GET by id at ${(bare.rps / baseline.rps).toFixed(2)}x the Express baseline (no adapter on node:http can pass it)\n`,
    );
}

await main();
