// Load generator process (pinned to its own core by run.ts): one autocannon run, JSON result on stdout.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  /** Path; `{id}` is replaced by ids from idsFile in turn; `{newId}` by a fresh id. */
  path: string;
  body?: string;
  headers: Record<string, string>;
  idsFile?: string;
  seconds: number;
  connections: number;
  /** After every `every` requests, one of these (the mixed cases: a create among the reads). */
  mix?: { every: number; method: 'POST'; path: string; body: string };
}

const spec = JSON.parse(process.argv[2]) as LoadSpec;
const ids: string[] = spec.idsFile ? JSON.parse(readFileSync(spec.idsFile, 'utf8')) : [];
let next = 0;
let counter = 0;
const fresh = () =>
  `${Date.now().toString(16).padStart(12, '0')}${(counter++).toString(16).padStart(12, '0')}`.slice(-24);

const main: autocannon.Request = {
  method: spec.method,
  headers: spec.headers,
  setupRequest: (request) => ({
    ...request,
    path: spec.path.replace('{id}', () => ids[next++ % ids.length]),
    ...(spec.body ? { body: spec.body.replace('{newId}', fresh) } : {}),
  }),
};
// Each connection goes through the list in turn, again and again.
const requests = spec.mix
  ? [
      ...Array.from({ length: spec.mix.every }, () => main),
      {
        method: spec.mix.method,
        headers: spec.headers,
        path: spec.mix.path,
        setupRequest: (request: autocannon.Request) => ({ ...request, body: spec.mix!.body.replace('{newId}', fresh) }),
      },
    ]
  : [main];
const result = await autocannon({ url: spec.url, connections: spec.connections, duration: spec.seconds, requests });
const failures = result.non2xx + result.errors + result.timeouts;
console.log(
  JSON.stringify({ rps: result.requests.average, p99: result.latency.p99, failures, total: result.requests.total }),
);
