// Memory under mixed load: one entigen server on the embedded store, for BENCH_SOAK_SECONDS
// (300): lists and writes, 100 realtime consumers that never read, and a webhook whose receiver
// never answers. The server's RSS and heap are sampled every BENCH_SOAK_SAMPLE_SECONDS (10);
// the target is an RSS that stays flat (the last sample within 10% of the one after the first
// minute) while the heap does.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRegistry } from '../bin/commands/serveCommand.js';
import { SERVE_ENV, SERVE_NODE_FLAGS } from '../bin/commands/serverHeap.js';
import { signSession } from '../runtime/auth/sessionToken.js';
import { openStore } from '../runtime/store/openStore.js';
import { newId } from '../runtime/write/prepareWrite.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const SECRET = 'bench-soak-secret';
const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 300);
const SAMPLE_SECONDS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 10);
const SILENT_STREAMS = 100;
/** Streams are limited per user (realtime.maxStreamsPerUser, 10): the silent ones belong to several. */
const SILENT_USERS = 20;
/** BENCH_SOAK_CLI=1: the real `entigen serve` instead of the benchmark's server. */
const BENCH_SOAK_CLI = process.env.BENCH_SOAK_CLI === '1';
const PORT = 4700 + Math.floor(Math.random() * 200);

/** A fresh database with administrators; their session tokens (the first one drives the load). */
async function prepare(databaseUrl: string): Promise<string[]> {
  const registry = await loadRegistry(root, 'generated');
  const store = await openStore(databaseUrl, root);
  await store.init(registry.model);
  const now = new Date().toISOString();
  const users = Array.from({ length: SILENT_USERS }, (_, i) => ({
    id: newId(),
    email: `soak${i}@example.test`,
    displayName: `Soak ${i}`,
    roles: ['ADMIN'],
    authSource: 'local',
    disabled: false,
    createdAt: now,
    updatedAt: now,
  }));
  await store.insertMany('users', users);
  await store.close();
  return users.map((user) => signSession(SECRET, user.id, Date.now()));
}

function call(method: string, path: string, token: string, body?: unknown): Promise<number> {
  return new Promise((resolve) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: PORT,
        method,
        path,
        headers: {
          authorization: `Bearer ${token}`,
          ...(text ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(text);
  });
}

/** A realtime stream whose client never reads a byte: the server keeps writing until it gives up. */
function silentStream(token: string): Socket {
  const socket = connect({ host: '127.0.0.1', port: PORT }, () => {
    socket.write(
      `GET /api/v1/realtime?entities=articles HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    socket.pause();
  });
  socket.on('error', () => undefined);
  return socket;
}

/** The benchmark's server: the example app, warnings only (as in bench/crud). */
async function serveBench(databaseUrl: string): Promise<ChildProcess> {
  const server = spawn(
    process.execPath,
    [...SERVE_NODE_FLAGS, join(here, 'crud', 'entigenServer.js'), databaseUrl, String(PORT), SECRET, root],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...SERVE_ENV, ...process.env, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' },
    },
  );
  await new Promise<void>((resolve) => server.stdout!.on('data', (d) => String(d).includes('listening') && resolve()));
  return server;
}

/** `entigen serve` as a user runs it: the request log at info level, written to a file. */
async function serveCli(databaseUrl: string): Promise<ChildProcess> {
  const logFile = join(mkdtempSync(join(tmpdir(), 'entigen-soak-log-')), 'server.log');
  const log = openSync(logFile, 'a');
  const server = spawn(process.execPath, [...SERVE_NODE_FLAGS, join(here, '..', 'bin', 'entigen.js'), 'serve'], {
    cwd: root,
    stdio: ['ignore', log, 'inherit'],
    env: {
      ...SERVE_ENV,
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      SESSION_SECRET: SECRET,
      APP_ENCRYPTION_KEY: SECRET,
      RATE_LIMIT_API: '1000000000/60',
      RATE_LIMIT_PUBLIC: '1000000000/60',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    },
  });
  console.log(`entigen serve, log in ${logFile}`);
  for (let tries = 0; tries < 200; tries++) {
    if ((await call('GET', '/api/health', '')) > 0) return server;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('entigen serve did not start');
}

function memory(pid: number): { rssMb: number } {
  const rss = Number(
    execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
      .toString()
      .trim(),
  );
  return { rssMb: Math.round(rss / 1024) };
}

async function main(): Promise<void> {
  const databaseUrl = `sqlite:${join(mkdtempSync(join(tmpdir(), 'entigen-soak-')), 'soak.db')}`;
  const tokens = await prepare(databaseUrl);
  const token = tokens[0];
  // A receiver that takes every delivery and never answers.
  const hanging = createServer(() => undefined);
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', () => resolve()));
  const server = BENCH_SOAK_CLI ? await serveCli(databaseUrl) : await serveBench(databaseUrl);
  const { port } = hanging.address() as { port: number };
  await call('POST', '/api/v1/webhooks', token, { url: `http://127.0.0.1:${port}/hook`, events: ['*'] });

  const until = Date.now() + SECONDS * 1000;
  let requests = 0;
  const worker = async (work: (i: number) => Promise<number>) => {
    for (let i = 0; Date.now() < until; i++) {
      await work(i);
      requests++;
    }
  };
  const silent: Socket[] = [];
  const keepSilentStreams = setInterval(() => {
    // Streams the server dropped (slow consumers) are opened again, so there are always some.
    for (let i = silent.length - 1; i >= 0; i--) if (silent[i].destroyed) silent.splice(i, 1);
    while (silent.length < SILENT_STREAMS) silent.push(silentStream(tokens[silent.length % tokens.length]));
  }, 1000);
  const samples: { at: number; rssMb: number; heapMb: number }[] = [];
  const started = Date.now();
  const sample = async () => {
    const health = await new Promise<{ memory: { heapUsed: number; heapTotal: number; external: number } }>(
      (resolve) => {
        request(
          { host: '127.0.0.1', port: PORT, path: '/api/health', headers: { authorization: `Bearer ${token}` } },
          (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () => resolve(JSON.parse(text)));
          },
        ).end();
      },
    );
    const at = Math.round((Date.now() - started) / 1000);
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    const row = { at, ...memory(server.pid!), heapMb: mb(health.memory.heapUsed) };
    samples.push(row);
    // What the RSS is made of: V8's heap (used and reserved), memory outside it that V8 knows of
    // (buffers, sockets' data), and the rest (native: SQLite, the allocator, code).
    const native = row.rssMb - mb(health.memory.heapTotal) - mb(health.memory.external);
    console.log(
      `${String(at).padStart(4)} s  rss ${row.rssMb} MB  heap ${row.heapMb}/${mb(health.memory.heapTotal)} MB  external ${mb(health.memory.external)} MB  other ${native} MB  requests ${requests}`,
    );
  };
  const sampler = setInterval(() => void sample(), SAMPLE_SECONDS * 1000);
  await Promise.all([
    ...Array.from({ length: 6 }, () => worker(() => call('GET', '/api/v1/articles?limit=20&sort=-createdAt', token))),
    ...Array.from({ length: 2 }, () =>
      worker((i) => call('POST', '/api/v1/articles', token, { title: `Soak ${i}`, body: 'x'.repeat(500) })),
    ),
  ]);
  clearInterval(sampler);
  clearInterval(keepSilentStreams);
  await sample();
  for (const socket of silent) socket.destroy();
  server.kill('SIGTERM');
  hanging.close();
  // Flat: every sample after the first minute (the load's warm-up, when caches fill and V8 sizes
  // its heap) within 10% of the others, and the last minute's median against the second's.
  const later = samples.filter((s) => s.at > 60);
  const rss = later.map((s) => s.rssMb);
  const low = Math.min(...rss);
  const high = Math.max(...rss);
  const medianOf = (from: number, to: number) => {
    const values = later
      .filter((s) => s.at > from && s.at <= to)
      .map((s) => s.rssMb)
      .sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? Number.NaN;
  };
  const last = samples.at(-1)!;
  const atMinute = samples.find((s) => s.at >= 60) ?? samples[0];
  console.log(
    `soak: RSS ${atMinute.rssMb} MB at the first minute; after it ${low}-${high} MB (spread x${(high / low).toFixed(2)}; target within 10%), the last minute's median x${(medianOf(last.at - 60, last.at) / medianOf(60, 120)).toFixed(2)} of the second's; heap ${atMinute.heapMb} -> ${last.heapMb} MB, ${requests} requests`,
  );
  process.exit(0);
}

await main();
