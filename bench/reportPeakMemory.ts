// Preloaded into a benchmarked process: prints its peak resident memory on exit.
process.on('exit', () => {
  process.stderr.write(`\nENTIGEN_BENCH_MAX_RSS_KB=${process.resourceUsage().maxRSS}\n`);
});
