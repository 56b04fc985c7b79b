import { setFlagsFromString } from 'node:v8';

/**
 * The node flags `entigen serve` runs with, on its command line (the bin's shebang, `npm start`,
 * the Dockerfile): V8 fixes the young generation's size when it starts. Semi-spaces of 8 MB
 * instead of 16 hold 16 MB less under load, for no throughput we could measure.
 */
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=8'] as const;

/**
 * The environment `entigen serve` starts with, on the same command lines: the C library reads it
 * when the process starts. glibc gives each thread that allocates (the event loop, libuv's pool
 * for files, hashing and compression, V8's compiler and collector threads, the SQLite checkpoint
 * thread) a malloc arena of its own, up to eight per core, and keeps what is freed in each: two
 * arenas held 5-9 MB less under load and after it, for no throughput the benchmarks could measure.
 * Other C libraries (musl) ignore it.
 */
export const SERVE_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/**
 * How much V8's old generation may grow past what survived the last full collection, in percent.
 * V8 lets it grow up to four times when collections are cheap, as they are for a server whose live
 * data is a few tens of megabytes: under load such a server held three times its live heap. At one
 * and a half times, the collections that come more often cost no throughput we could measure.
 */
export const HEAP_GROWING_PERCENT = 50;

/** The V8 flag `entigen serve` sets, unless the node command line chose its own. */
export function heapGrowthFlag(execArgv: readonly string[]): string | undefined {
  return execArgv.some((flag) => /^--heap[-_]growing[-_]percent\b/.test(flag))
    ? undefined
    : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Bounds the heap's growth for the serving process (V8 reads the flag at every collection). */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  const flag = heapGrowthFlag(execArgv);
  if (flag) setFlagsFromString(flag);
}
