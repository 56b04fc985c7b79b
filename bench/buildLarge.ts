import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `entigen build` on a large model: ENTITIES entities of FIELDS fields each, the real CLI.
// - first: a new project, nothing kept from before: every file parsed, every validator compiled.
// - again: the median of RUNS builds, each in a new copy of the project (no output yet) with what
//   the builds before kept (ENTIGEN_MODULE_CACHE): every file made and written, none parsed or
//   compiled again (a fresh clone of an unchanged project, or an output folder deleted).
// - edit: the median of RUNS builds of the first project, its output in place, after one entity
//   file gained a field each time: the rebuild of everyday work (only changed files are written).
// Each build writes into a folder of its own that was never deleted: this machine's ext4 runs
// without a journal, and there a file created within 30 s of the deletion of others walks past
// each of those inodes (the kernel's recently_deleted), which made a build into an output folder
// deleted just before 0.5-1 s slower, a cost of the filesystem and not of the build.
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
  /** The first build, with nothing kept from before. */
  firstMs: number;
  /** A new copy of the project, with the parsed files and compiled validators kept. */
  wallMs: number;
  /** The project with its output, after one entity file changed. */
  editMs: number;
  peakMb: number;
  files: number;
}

function runBuild(cwd: string, env: NodeJS.ProcessEnv): { wallMs: number; peakMb: number; files: number } {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--import', preload, cli, 'build'], { cwd, encoding: 'utf8', env });
  const wallMs = performance.now() - started;
  if (result.status !== 0) throw new Error(`build failed:\n${result.stderr}`);
  const rssKb = Number(/ENTIGEN_BENCH_MAX_RSS_KB=(\d+)/.exec(result.stderr)?.[1]);
  return { wallMs, peakMb: rssKb / 1024, files: Number(/\((\d+) written/.exec(result.stdout)?.[1]) };
}

export function benchBuild(): BuildBench {
  const dir = mkdtempSync(join(tmpdir(), 'entigen-bench-build-'));
  const project = join(dir, 'project');
  writeModel(project);
  // What the builds keep goes with the run's folder.
  const env = { ...process.env, ENTIGEN_MODULE_CACHE: join(dir, 'cache') };
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  try {
    const first = runBuild(project, env);
    const again = Array.from({ length: RUNS }, (_, i) => {
      const copy = join(dir, `copy${i}`);
      cpSync(join(project, 'entities'), join(copy, 'entities'), { recursive: true });
      return runBuild(copy, env);
    });
    // A field more each time (a field removed would be a breaking change, refused without a migration).
    const edited = join(project, 'entities', 'entities0.yaml');
    const edits = Array.from({ length: RUNS }, (_, i) => {
      writeFileSync(
        edited,
        readFileSync(edited, 'utf8').replace('fields:\n', `fields:\n  added${i}: { type: string }\n`),
      );
      return runBuild(project, env);
    });
    const runs = [first, ...again, ...edits];
    return {
      firstMs: first.wallMs,
      wallMs: median(again.map((r) => r.wallMs)),
      editMs: median(edits.map((r) => r.wallMs)),
      peakMb: median(runs.map((r) => r.peakMb)),
      files: first.files,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = benchBuild();
  const verdict = (ok: boolean) => (ok ? 'ok' : 'OVER TARGET');
  console.log(`entigen build, ${ENTITIES} entities x ${FIELDS} fields (${result.files} files):`);
  console.log(
    `  first ${result.firstMs.toFixed(0)} ms   (a new project: every file parsed, every validator compiled; target < ${TARGET_MS} ms: ${verdict(result.firstMs < TARGET_MS)})`,
  );
  console.log(
    `  again ${result.wallMs.toFixed(0)} ms   (median of ${RUNS}, a new copy of the project, what earlier builds parsed and compiled kept; target < ${TARGET_MS} ms: ${verdict(result.wallMs < TARGET_MS)})`,
  );
  console.log(
    `  edit  ${result.editMs.toFixed(0)} ms   (median of ${RUNS}, one entity file changed, the output in place; target < ${TARGET_MS} ms: ${verdict(result.editMs < TARGET_MS)})`,
  );
  console.log(
    `  peak  ${result.peakMb.toFixed(0)} MB   (target < ${TARGET_MB} MB: ${verdict(result.peakMb < TARGET_MB)})`,
  );
}
