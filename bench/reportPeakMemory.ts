import { isMainThread } from 'node:worker_threads';

// Preloaded into a benchmarked process (and so into its worker threads): the main thread prints
// the process's peak resident memory on exit.
if (isMainThread)
  process.on('exit', () => {
    process.stderr.write(`\nENTIGEN_BENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS}\n`);
  });
