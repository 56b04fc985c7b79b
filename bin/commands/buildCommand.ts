import { resolve } from 'node:path';
import { build } from '../../generator/build.js';
import { formatDiagnostic } from '../../generator/diagnostics.js';
import { OutputWriter } from '../../generator/writeOutput.js';
import { cacheDir, PARSED_CACHE } from './cacheDir.js';
import { checkModules } from './checkModules.js';
import { indexPlanSummary } from './indexesCommand.js';
import { recordCounts } from './recordCounts.js';
import { reportFailure } from './reportFailure.js';

export interface PathOptions {
  entities: string;
  out: string;
}

export interface BuildCommandOptions extends PathOptions {
  resetBaseline?: boolean;
  /** Commander's spelling of --no-typecheck. */
  typecheck?: boolean;
}

const LARGE_MODEL = 50;

export async function buildCommand(options: BuildCommandOptions): Promise<void> {
  const started = performance.now();
  try {
    const root = process.cwd();
    // Large models show each stage as it ends (on stderr, so stdout stays the summary and the index plan).
    let large = false;
    const writer = new OutputWriter(resolve(root, options.out));
    const { model, files } = await build({
      root,
      entitiesDir: options.entities,
      outDir: options.out,
      cacheDir: cacheDir(root, PARSED_CACHE),
      onProgress: (stage, ms) => {
        large ||= /^read (\d+)/.test(stage) && Number(/^read (\d+)/.exec(stage)![1]) >= LARGE_MODEL;
        if (large) process.stderr.write(`entigen: ${stage} (${ms} ms)\n`);
      },
      writer,
      // A breaking change without a migration passes where no record is at stake.
      records: (plurals) => recordCounts(root, process.env.DATABASE_URL, plurals),
      resetBaseline: options.resetBaseline,
      onAccepted: (message) => process.stdout.write(`entigen: ${message}\n`),
    });
    const summary = writer.finish(files);
    const ms = Math.round(performance.now() - started);
    const removed = summary.removed.length > 0 ? `, ${summary.removed.length} removed` : '';
    process.stdout.write(
      `entigen: ${model.entities.length} entities -> ${options.out}/ (${summary.written.length} written, ${summary.unchanged} unchanged${removed}) in ${ms} ms\n`,
    );
    process.stdout.write(indexPlanSummary(model));
    if (options.typecheck !== false) await typecheckModules(root);
  } catch (error) {
    reportFailure(error);
  }
}

/**
 * The hook and job modules checked against the types just written: a type or syntax error
 * fails the build at file:line:col (the generated files stay written, for an editor to use).
 */
async function typecheckModules(root: string): Promise<void> {
  const started = performance.now();
  const checked = await checkModules(root);
  if ('skipped' in checked) {
    if (!checked.skipped.startsWith('no '))
      process.stdout.write(`entigen: hooks and jobs not type-checked: ${checked.skipped}\n`);
    return;
  }
  if (checked.diagnostics.length === 0) {
    process.stdout.write(`entigen: hooks and jobs type-checked in ${Math.round(performance.now() - started)} ms\n`);
    return;
  }
  for (const diagnostic of checked.diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
  process.stderr.write(
    `entigen: ${checked.diagnostics.length} type error(s) in hooks and jobs; the generated files are written (--no-typecheck builds without this check)\n`,
  );
  process.exitCode = 1;
}
