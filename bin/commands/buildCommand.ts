import { resolve } from 'node:path';
import { build } from '../../generator/build.js';
import { writeOutput } from '../../generator/writeOutput.js';
import { reportFailure } from './reportFailure.js';

export interface PathOptions {
  entities: string;
  out: string;
}

const LARGE_MODEL = 50;

export async function buildCommand(options: PathOptions): Promise<void> {
  const started = performance.now();
  try {
    const root = process.cwd();
    const { model, files } = await build({ root, entitiesDir: options.entities, outDir: options.out });
    if (model.entities.length >= LARGE_MODEL) process.stderr.write(`entigen: ${model.entities.length} entities modelled, writing ${files.size} files\n`);
    const summary = writeOutput(resolve(root, options.out), files);
    const ms = Math.round(performance.now() - started);
    const removed = summary.removed.length > 0 ? `, ${summary.removed.length} removed` : '';
    process.stdout.write(
      `entigen: ${model.entities.length} entities -> ${options.out}/ (${summary.written.length} written, ${summary.unchanged} unchanged${removed}) in ${ms} ms\n`,
    );
  } catch (error) {
    reportFailure(error);
  }
}
