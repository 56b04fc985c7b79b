// `entigen import` of 100,000 articles from JSON lines into a fresh SQLite database, through the
// CLI as a user runs it (validator, references, unique skus, first versions), and `entigen export`
// of them back: the time of each and the records per second. Target: the import under 60 s.
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const RECORDS = Number(process.env.BENCH_IMPORT_RECORDS ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'entigen-bench-import-'));
const file = join(dir, 'articles.jsonl');

const out = createWriteStream(file);
const owner = 'a'.repeat(24);
for (let n = 0; n < RECORDS; n++) {
  const line = JSON.stringify({
    title: `Imported article ${n}`,
    body: `Body of imported article ${n} with some words`,
    kind: ['news', 'opinion', 'guide'][n % 3],
    views: n % 1000,
    tags: ['bench', `t${n % 50}`],
    sku: `IMP-${n}`,
    ownerId: owner,
  });
  if (!out.write(`${line}\n`)) await once(out, 'drain');
}
out.end();
await once(out, 'close');

const cli = join(root, 'dist', 'bin', 'entigen.js');
const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'target.db')}` };
const timed = (args: string[]) => {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: root, env, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`entigen ${args.join(' ')} failed: ${result.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
};
const importSeconds = timed(['import', 'articles', file]);
const exportSeconds = timed(['export', 'articles', '--to', join(dir, 'back.jsonl')]);
const megabytes = (statSync(file).size / 1024 / 1024).toFixed(1);
process.stdout.write(
  `import   ${RECORDS} articles (${megabytes} MB of JSON lines) into SQLite: ${importSeconds.toFixed(1)} s, ${Math.round(RECORDS / importSeconds)} records/s (target: under 60 s)\n`,
);
process.stdout.write(
  `export   ${RECORDS} articles to JSON lines: ${exportSeconds.toFixed(1)} s, ${Math.round(RECORDS / exportSeconds)} records/s\n`,
);
