import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';
// The entigen server under benchmark: the generated example app over the seeded file.
import { pino } from 'pino';
import { loadRegistry } from '../../bin/commands/serveCommand.js';
import { boundHeapGrowth } from '../../bin/commands/serverHeap.js';
import { loadRuntimeConfig } from '../../runtime/config/runtimeConfig.js';
import { startServer } from '../../runtime/server/startServer.js';

// The heap policy of `entigen serve`.
boundHeapGrowth();
const [databaseUrl, port, secret, root] = process.argv.slice(2);
const registry = await loadRegistry(root, 'generated');
// BENCH_HOOKS=1: an empty beforeCreate and an afterCommit on articles (the cost of hooks).
const hooks = process.env.BENCH_HOOKS
  ? [
      ...[...registry.hooks].map(([plural, entityHooks]) => ({ plural, hooks: entityHooks })),
      { plural: 'articles', hooks: { beforeCreate: () => undefined, afterCommit: () => undefined } },
    ]
  : undefined;
// BENCH_MAX_STREAMS=N: room for N realtime streams on this instance (the realtime benchmark at scale).
const maxStreams = Number(process.env.BENCH_MAX_STREAMS ?? 0);
const overrides =
  maxStreams > 0 ? { realtime: { ...loadRuntimeConfig(root, process.env).realtime, maxStreams } } : undefined;
const running = await startServer({
  registry,
  hooks,
  overrides,
  root,
  port: Number(port),
  host: '127.0.0.1',
  logger: pino({ level: 'warn' }),
  // The full pipeline runs, rate limiting included, with a limit the load never reaches.
  env: {
    DATABASE_URL: databaseUrl,
    SESSION_SECRET: secret,
    APP_ENCRYPTION_KEY: secret,
    RATE_LIMIT_API: '1000000000/60',
    RATE_LIMIT_PUBLIC: '1000000000/60',
    // COMPRESSION=false: answers as they are, whatever the client accepts.
    ...(process.env.COMPRESSION ? { COMPRESSION: process.env.COMPRESSION } : {}),
    // The entigen-node target: the node:http adapter.
    ...(process.env.HTTP_ADAPTER ? { HTTP_ADAPTER: process.env.HTTP_ADAPTER } : {}),
    // ENTIGEN_COUNT_CACHE=off: every totalCount from the store (what a first, uncached list costs).
    ...(process.env.ENTIGEN_COUNT_CACHE ? { ENTIGEN_COUNT_CACHE: process.env.ENTIGEN_COUNT_CACHE } : {}),
    // Traces: the OpenTelemetry variables as given (bench/traceSink.ts receives what they export).
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_'))),
    // The realtime benchmark runs two instances that share Redis.
    ...(process.env.REDIS_URL
      ? { REDIS_URL: process.env.REDIS_URL, ENTIGEN_REDIS_PREFIX: process.env.ENTIGEN_REDIS_PREFIX ?? 'bench' }
      : {}),
  },
});
console.log('listening');
// SIGUSR2: where the memory is (the runner asks at the end, beside the RSS it reads itself).
// With --expose-gc in BENCH_SERVER_FLAGS it also tells what stays after a full collection.
process.on('SIGUSR2', () => {
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  const collect = (globalThis as { gc?: () => void }).gc;
  collect?.();
  const after = collect ? process.memoryUsage() : undefined;
  if (process.env.BENCH_MEMORY_MAP) appendFileSync(process.env.BENCH_MEMORY_MAP, memoryMap());
  // BENCH_HEAP_SNAPSHOT=DIR: what the live heap holds, for Chrome DevTools' Memory tab.
  if (process.env.BENCH_HEAP_SNAPSHOT)
    v8.writeHeapSnapshot(join(process.env.BENCH_HEAP_SNAPSHOT, `entigen-${process.pid}.heapsnapshot`));
  console.log(
    `memory ${JSON.stringify({ rss, heapTotal, heapUsed, external, arrayBuffers, live: after?.heapUsed, after: after && { rss: after.rss, heapTotal: after.heapTotal } })}`,
  );
});
// A clean exit on SIGTERM, so a CPU profile (BENCH_PROFILE) gets written.
process.once('SIGTERM', () => void running.close().finally(() => process.exit(0)));

/**
 * BENCH_MEMORY_MAP=FILE: where the memory is, in MB: each V8 space (reserved/used) and the resident
 * memory of each mapping of 1 MB or more (anonymous ones by their size), largest first.
 */
function memoryMap(): string {
  const mb = (bytes: number) => Math.round(bytes / 1048576);
  const spaces = v8
    .getHeapSpaceStatistics()
    .filter((space) => space.space_size > 0)
    .map((space) => `${space.space_name} ${mb(space.space_size)}/${mb(space.space_used_size)}`);
  const resident = new Map<string, number>();
  let mapping = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (range)
      mapping = range[3] || `anonymous ${mb(Number.parseInt(range[2], 16) - Number.parseInt(range[1], 16))} MB`;
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) resident.set(mapping, (resident.get(mapping) ?? 0) + Number(rss[1]) * 1024);
  }
  const mappings = [...resident]
    .filter(([, bytes]) => bytes >= 1048576)
    .sort((a, b) => b[1] - a[1])
    .map(([name, bytes]) => `${name} ${mb(bytes)}`);
  return `${process.pid} V8 spaces: ${spaces.join(', ')}\n${process.pid} resident: ${mappings.join('; ')}\n`;
}
