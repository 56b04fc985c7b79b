import { setFlagsFromString } from 'node:v8';

/**
 * The node flags `entigen serve` runs with, on its command line (the bin's shebang, `npm start`,
 * the Dockerfile): V8 fixes the young generation's size when it starts. Semi-spaces of 8 MB
 * instead of 16 hold 16 MB less under load, for no throughput we could measure.
 */
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=8'] as const;

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
