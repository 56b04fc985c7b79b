// An OTLP/HTTP sink for the benchmarks with traces on: accepts every export, counts requests and
// bytes, decodes nothing. `node dist/bench/traceSink.js 4318`, then run a benchmark with
// OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 (BENCH_COMPARE_ENV for one side only).

import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 4318);
let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    requests++;
    res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/x-protobuf' }).end();
  });
});
server.listen(port, '127.0.0.1', () => console.log(`trace sink on http://127.0.0.1:${port}`));
const report = () => console.log(`trace sink: ${requests} exports, ${(bytes / 1e6).toFixed(1)} MB`);
process.on('SIGTERM', () => {
  report();
  process.exit(0);
});
process.on('SIGINT', () => {
  report();
  process.exit(0);
});
