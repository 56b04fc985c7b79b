import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `entigen build` on a large model: ENTITIES entities of FIELDS fields each. The first build parses
// every entity file; the median of the next RUNS, each after the output was deleted, parses none
// (the files are unchanged: what a rebuild after editing a few of them comes close to).
export const ENTITIES = 200;
export const FIELDS = 15;
const RUNS = 3;
const TARGET_MS = 2000;
const TARGET_MB = 300;

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', 'bin', 'entigen.js');
const preload = join(here, 'reportPeakMemory.js');

const FIELD_SHAPES = [
  '{ type: string, required: true, search: true }',
  '{ type: int, default: 0 }',
  '{ type: float }',
  '{ type: boolean, default: false }',
  '{ type: enum, values: [a, b, c], default: a }',
  '{ type: isoDate }',
  '{ type: url }',
  '{ type: array, items: { type: string }, default: [] }',
  '{ type: object }',
  '{ type: any }',
  '{ type: string, unique: true }',
  '{ type: encryptedKey }',
  '{ type: float, trackChanges: true }',
  '{ type: enum, values: [{ key: lo, label: Low }, { key: hi, label: High }] }',
];

function writeModel(dir: string): void {
  mkdirSync(join(dir, 'entities'), { recursive: true });
  for (let e = 0; e < ENTITIES; e++) {
    const lines = [
      `version: 1`,
      `name: Entity${e}`,
      `plural: entities${e}`,
      `base: owned`,
      `versioning: ${e % 2 ? 'full' : 'simple'}`,
      'fields:',
    ];
    for (let f = 0; f < FIELDS - 1; f++) lines.push(`  field${f}: ${FIELD_SHAPES[f % FIELD_SHAPES.length]}`);
    lines.push(`  link: { type: objectId, ref: entities${(e + 1) % ENTITIES} }`);
    lines.push('filters: [field1, field3, field4, link]');
    writeFileSync(join(dir, 'entities', `entities${e}.yaml`), `${lines.join('\n')}\n`);
  }
}

export interface BuildBench {
  /** The first build, with no parsed files kept from before. */
  firstMs: number;
  wallMs: number;
  peakMb: number;
  files: number;
}

export function benchBuild(): BuildBench {
  const dir = mkdtempSync(join(tmpdir(), 'entigen-bench-build-'));
  writeModel(dir);
  const runs: { wallMs: number; peakMb: number }[] = [];
  let files = 0;
  // The parsed files' cache goes with the run's folder.
  const env = { ...process.env, ENTIGEN_MODULE_CACHE: join(dir, 'cache') };
  for (let i = 0; i <= RUNS; i++) {
    rmSync(join(dir, 'generated'), { recursive: true, force: true });
    const started = performance.now();
    const result = spawnSync(process.execPath, ['--import', preload, cli, 'build'], {
      cwd: dir,
      encoding: 'utf8',
      env,
    });
    const wallMs = performance.now() - started;
    if (result.status !== 0) throw new Error(`build failed:\n${result.stderr}`);
    const rssKb = Number(/ENTIGEN_BENCH_MAX_RSS_KB=(\d+)/.exec(result.stderr)?.[1]);
    files = Number(/\((\d+) written/.exec(result.stdout)?.[1]);
    runs.push({ wallMs, peakMb: rssKb / 1024 });
  }
  rmSync(dir, { recursive: true, force: true });
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const [first, ...later] = runs;
  return {
    firstMs: first.wallMs,
    wallMs: median(later.map((r) => r.wallMs)),
    peakMb: median(runs.map((r) => r.peakMb)),
    files,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = benchBuild();
  const verdict = (ok: boolean) => (ok ? 'ok' : 'OVER TARGET');
  console.log(`entigen build, ${ENTITIES} entities x ${FIELDS} fields (${result.files} files):`);
  console.log(
    `  first ${result.firstMs.toFixed(0)} ms   (every file parsed; target < ${TARGET_MS} ms: ${verdict(result.firstMs < TARGET_MS)})`,
  );
  console.log(
    `  again ${result.wallMs.toFixed(0)} ms   (median of ${RUNS}, the files parsed before; target < ${TARGET_MS} ms: ${verdict(result.wallMs < TARGET_MS)})`,
  );
  console.log(
    `  peak  ${result.peakMb.toFixed(0)} MB   (target < ${TARGET_MB} MB: ${verdict(result.peakMb < TARGET_MB)})`,
  );
}
