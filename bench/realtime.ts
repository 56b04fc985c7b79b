// Realtime: commit-to-event latency for subscribers on one instance and across two instances
// (PostgreSQL + Redis), create throughput with the streams open against none, and the server's
// memory per open stream. BENCH_SUBSCRIBERS=10000 holds that many streams open on one instance:
// 100 administrators who see every create (their latency is measured) and the rest ordinary
// users whom the access rules show none of them (drafts), so the server decides for each of
// them and sends nothing but heartbeats.
// Targets: p99 under 100 ms on one instance; create throughput within 15% of no streams.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadRegistry } from '../bin/commands/serveCommand.js';
import { SERVE_ENV, SERVE_NODE_FLAGS } from '../bin/commands/serverHeap.js';
import { signSession } from '../runtime/auth/sessionToken.js';
import { openStore } from '../runtime/store/openStore.js';
import { newId } from '../runtime/write/prepareWrite.js';
import { coreTicks, cpuSeconds, withCpuPerRequest } from './procStat.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const SECRET = 'bench-secret';
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 100);
/** Subscribers who see every create and whose latency is measured; the rest see none of them. */
const MEASURED = Math.min(100, SUBSCRIBERS);
const WRITES = Number(process.env.BENCH_REALTIME_WRITES ?? 300);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Rounds of the throughput comparison (BENCH_ROUNDS): each pairs a load without streams with one beside them. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_PROFILE=DIR writes V8 CPU profiles of the servers to DIR (open them in Chrome DevTools). */
const PROFILE = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
/** How long the server's CPU is watched with the quiet streams open and no writes (BENCH_IDLE_SECONDS). */
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 16);
/** Streams opened at a time. */
const OPENING = 250;

interface Stream {
  events: number;
  latencies: number[];
  close(): void;
}

/** One SSE subscriber; with `measure`, each created article's delay from its createdAt is kept. */
function subscribe(url: string, token: string, measure: boolean, quiet = false): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const stream: Stream = { events: 0, latencies: [], close: () => req.destroy() };
    const req = request(
      `${url}/api/v1/realtime?entities=articles`,
      { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`subscribe answered ${res.statusCode}`));
        if (quiet) {
          // What arrives (for the quiet subscribers, only heartbeats: their rules show them none of the creates) is dropped.
          res.resume();
          res.on('error', () => undefined);
          return resolve(stream);
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = Date.now();
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
            const data = block.split('\n').find((line) => line.startsWith('data: '));
            if (!data) continue;
            stream.events++;
            if (measure) stream.latencies.push(now - Date.parse(JSON.parse(data.slice(6)).createdAt));
          }
        });
        res.on('error', () => undefined);
        resolve(stream);
      },
    );
    req.on('error', () => undefined);
    req.end();
  });
}

interface Tokens {
  /** Administrators' sessions: they see every create. */
  measured: string[];
  /** Ordinary users' sessions: the rules show them no draft. */
  quiet: string[];
}

/** A fresh database with MEASURED administrators and the other subscribers as ordinary users; their sessions. */
async function prepare(databaseUrl: string): Promise<Tokens> {
  const registry = await loadRegistry(root, 'generated');
  const store = await openStore(databaseUrl, root);
  await store.init(registry.model);
  const now = new Date().toISOString();
  const users = Array.from({ length: SUBSCRIBERS }, (_, i) => ({
    id: newId(),
    email: `rt${i}@example.test`,
    displayName: `Subscriber ${i}`,
    roles: [i < MEASURED ? 'ADMIN' : 'USER'],
    authSource: 'local',
    disabled: false,
    createdAt: now,
    updatedAt: now,
  }));
  for (let i = 0; i < users.length; i += 1000) await store.insertMany('users', users.slice(i, i + 1000));
  await store.close();
  const tokens = users.map((u) => signSession(SECRET, u.id, Date.now()));
  return { measured: tokens.slice(0, MEASURED), quiet: tokens.slice(MEASURED) };
}

/** Opens the quiet streams, OPENING at a time. */
async function openQuiet(url: string, tokens: string[]): Promise<Stream[]> {
  const streams: Stream[] = [];
  for (let i = 0; i < tokens.length; i += OPENING)
    streams.push(...(await Promise.all(tokens.slice(i, i + OPENING).map((t) => subscribe(url, t, false, true)))));
  return streams;
}

/** The resident memory of a process, in bytes. */
const rssOf = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

function startServer(core: number, databaseUrl: string, port: number, env: Record<string, string> = {}): ChildProcess {
  const room = SUBSCRIBERS > 1000 ? { BENCH_MAX_STREAMS: String(SUBSCRIBERS + 100) } : {};
  return spawn(
    'taskset',
    [
      '-c',
      String(core),
      process.execPath,
      ...PROFILE,
      ...SERVE_NODE_FLAGS,
      // BENCH_SERVER_FLAGS: V8 flags for the servers, after those of `entigen serve`.
      ...(process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? []),
      join(here, 'crud', 'entigenServer.js'),
      databaseUrl,
      String(port),
      SECRET,
      root,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...SERVE_ENV, ...process.env, ...room, ...env } },
  );
}

/**
 * Asks the health check every 20 ms for `ms`, from a process of its own (this one also runs the
 * subscribers, which a heartbeat keeps busy too); the longest answer, in ms: a heartbeat that
 * holds the server's event loop shows here.
 */
async function probe(url: string, ms: number): Promise<number> {
  const script = `
    let slowest = 0;
    const end = Date.now() + ${ms};
    while (Date.now() < end) {
      const started = performance.now();
      await (await fetch(${JSON.stringify(`${url}/api/health`)})).arrayBuffer();
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 20));
    }
    console.log(slowest);`;
  const child = spawn('taskset', ['-c', '1', process.execPath, '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  await new Promise((resolve) => child.on('exit', resolve));
  return Number(output.trim());
}

async function waitUntilUp(url: string, child: ChildProcess): Promise<void> {
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    try {
      await fetch(`${url}/api/health`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`server did not start: ${output}`);
}

const stop = (child: ChildProcess) =>
  new Promise((exited) => {
    child.once('exit', exited);
    child.kill('SIGTERM');
  });

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
};
const median = (values: number[]) => percentile(values, 50);

/** WRITES creates, one at a time with a short pause, through `writeUrl`; latencies seen by the streams on `readUrl`. */
async function latency(writeUrl: string, readUrl: string, tokens: string[]): Promise<{ p50: number; p99: number }> {
  const streams = await Promise.all(tokens.map((token) => subscribe(readUrl, token, true)));
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 0; i < WRITES; i++) {
    await fetch(`${writeUrl}/api/v1/articles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `Latency ${i}`, body: 'b' }),
    });
    await new Promise((r) => setTimeout(r, 10));
  }
  for (let i = 0; i < 100 && streams.some((s) => s.events < WRITES); i++) await new Promise((r) => setTimeout(r, 50));
  for (const stream of streams) stream.close();
  const all = streams.flatMap((s) => s.latencies);
  const missing = streams.reduce((n, s) => n + Math.max(0, WRITES - s.events), 0);
  if (missing > 0) process.stdout.write(`  (${missing} events missing at the end)\n`);
  return { p50: percentile(all, 50), p99: percentile(all, 99) };
}

interface Measured {
  rps: number;
  /** The server's CPU time per create, in µs. */
  cpuMicros?: number;
  /** How busy the load generator's core was (it also runs the subscribers), 0-1. */
  clientBusy?: number;
}

/** A load as `load` runs it, with the server's CPU per create and the client core's use. */
function measured(url: string, token: string, server: ChildProcess): Measured {
  const coreBefore = coreTicks(1);
  const { rps, cpuMicros } = withCpuPerRequest(server.pid, () => loadResult(url, token));
  const coreAfter = coreTicks(1);
  return {
    rps,
    cpuMicros,
    clientBusy:
      coreBefore && coreAfter ? (coreAfter.busy - coreBefore.busy) / (coreAfter.total - coreBefore.total) : undefined,
  };
}

/** Waits (5 s at most) until the server used under a tenth of its core for a quarter of a second. */
async function quietened(server: ChildProcess): Promise<void> {
  for (let waited = 0; waited < 5000; waited += 250) {
    const before = cpuSeconds(server.pid);
    await new Promise((r) => setTimeout(r, 250));
    const after = cpuSeconds(server.pid);
    if (before === undefined || after === undefined || after - before < 0.025) return;
  }
}

function load(url: string, token: string): number {
  return loadResult(url, token).rps;
}

function loadResult(url: string, token: string): { rps: number; total: number } {
  const spec = {
    url,
    method: 'POST',
    path: '/api/v1/articles',
    body: JSON.stringify({ title: 'New article', body: 'Some body text' }),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
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
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!);
}

async function main() {
  // The subscribers run here, beside the load generator on core 1: the server has core 0 to itself.
  spawnSync('taskset', ['-p', '-c', '1', String(process.pid)]);
  const dir = mkdtempSync(join(tmpdir(), 'entigen-bench-rt-'));
  const sqlite = `sqlite:${join(dir, 'rt.db')}`;
  const tokens = await prepare(sqlite);
  const url = 'http://127.0.0.1:4300';
  const server = startServer(0, sqlite, 4300);
  const quietCount = tokens.quiet.length;
  const shape =
    quietCount > 0 ? `${SUBSCRIBERS} subscribers (${MEASURED} see every create)` : `${SUBSCRIBERS} subscribers`;
  try {
    await waitUntilUp(url, server);
    load(url, tokens.measured[0]);
    let quiet: Stream[] = [];
    if (quietCount > 0) {
      const before = rssOf(server.pid!);
      quiet = await openQuiet(url, tokens.quiet);
      await new Promise((r) => setTimeout(r, 2000));
      const after = rssOf(server.pid!);
      // What the open streams cost without any event: heartbeats, credentials and constraints asked again.
      const idleFrom = cpuSeconds(server.pid);
      const slowest = await probe(url, IDLE_SECONDS * 1000);
      const idle = (((cpuSeconds(server.pid) ?? 0) - (idleFrom ?? 0)) / IDLE_SECONDS) * 100;
      process.stdout.write(
        `realtime  ${quietCount} quiet streams opened: server RSS ${(before / 2 ** 20).toFixed(0)} MB -> ${(after / 2 ** 20).toFixed(0)} MB, ${((after - before) / quietCount / 1024).toFixed(1)} KB per stream; with no writes the server then used ${idle.toFixed(1)}% of its core for ${IDLE_SECONDS} s (heartbeats included); the slowest of its answers to a health check every 20 ms meanwhile took ${slowest.toFixed(0)} ms\n`,
      );
    }
    const one = await latency(url, url, tokens.measured);
    process.stdout.write(
      `realtime  one instance (SQLite), ${shape}, ${WRITES} creates: commit-to-event p50 ${one.p50} ms, p99 ${one.p99} ms (target p99 < 100)\n`,
    );
    for (const stream of quiet) stream.close();
    await new Promise((r) => setTimeout(r, 500));
    const without: Measured[] = [];
    const withStreams: Measured[] = [];
    // Rounds interleave the two cases, so drift of this shared machine hits each alike.
    for (let round = 0; round < ROUNDS; round++) {
      without.push(measured(url, tokens.measured[0], server));
      // Here the clients only drain their sockets: parsing would take the load generator's core.
      const streams = [
        ...(await Promise.all(tokens.measured.map((token) => subscribe(url, token, false, true)))),
        ...(await openQuiet(url, tokens.quiet)),
      ];
      // The streams are open, not yet what opening them left to do (and to collect): measured once it is done.
      await quietened(server);
      withStreams.push(measured(url, tokens.measured[0], server));
      for (const stream of streams) stream.close();
      // Closing them leaves the server work (their sockets' resets and errors): the next load waits for it.
      await new Promise((r) => setTimeout(r, 300 + quietCount / 10));
      await quietened(server);
    }
    const a = median(without.map((m) => m.rps));
    const b = median(withStreams.map((m) => m.rps));
    // Each round's own ratio too: the machine's speed drifts between rounds more than within one.
    const ratios = withStreams.map((m, i) => m.rps / without[i].rps);
    process.stdout.write(
      `realtime  create throughput: ${a.toFixed(0)} req/s without streams, ${b.toFixed(0)} req/s with ${SUBSCRIBERS} open streams: ${(b / a).toFixed(2)}x; per round ${median(ratios).toFixed(2)}x median, ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)} (target >= 0.85)\n`,
    );
    const cpu = (list: Measured[]) => median(list.flatMap((m) => (m.cpuMicros === undefined ? [] : [m.cpuMicros])));
    const busy = (list: Measured[]) => median(list.flatMap((m) => (m.clientBusy === undefined ? [] : [m.clientBusy])));
    if (without[0].cpuMicros !== undefined)
      process.stdout.write(
        `realtime  server CPU per create: ${cpu(without).toFixed(0)} µs without streams, ${cpu(withStreams).toFixed(0)} µs with them (${(cpu(withStreams) / cpu(without)).toFixed(2)}x); the clients' core ${(busy(without) * 100).toFixed(0)}% and ${(busy(withStreams) * 100).toFixed(0)}% busy (the load generator and the subscribers share it)\n`,
      );
  } finally {
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.env.BENCH_REALTIME_CLUSTER === '0') return;

  const schema = `bench_rt_${Date.now()}`;
  const pgUrl = `postgres://postgres@127.0.0.1:5432/test?schema=${schema}`;
  const pgTokens = await prepare(pgUrl);
  const env = { REDIS_URL: 'redis://127.0.0.1:6379', ENTIGEN_REDIS_PREFIX: `bench-${randomUUID()}` };
  const a = startServer(0, pgUrl, 4301, env);
  const b = startServer(1, pgUrl, 4302, env);
  try {
    await Promise.all([waitUntilUp('http://127.0.0.1:4301', a), waitUntilUp('http://127.0.0.1:4302', b)]);
    const two = await latency('http://127.0.0.1:4301', 'http://127.0.0.1:4302', pgTokens.measured);
    process.stdout.write(
      `realtime  two instances (PostgreSQL + Redis), writes on A, ${MEASURED} subscribers on B: p50 ${two.p50} ms, p99 ${two.p99} ms\n`,
    );
  } finally {
    await Promise.all([stop(a), stop(b)]);
    // Each run's schema goes with it: copies left behind slow later runs' writes.
    const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => admin.end());
  }
}

await main();
