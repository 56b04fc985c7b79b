import { resolve } from 'node:path';
import { build } from '../../generator/build.js';
import { compareOutput } from '../../generator/compareOutput.js';
import type { PathOptions } from './buildCommand.js';
import { cacheDir, PARSED_CACHE } from './cacheDir.js';
import { reportFailure } from './reportFailure.js';

/** Exits 1 and lists every stale, missing and extra file when the output is not what build would write. */
export async function checkCommand(options: PathOptions): Promise<void> {
  try {
    const root = process.cwd();
    const { files } = await build({
      root,
      entitiesDir: options.entities,
      outDir: options.out,
      cacheDir: cacheDir(root, PARSED_CACHE),
    });
    const difference = compareOutput(resolve(root, options.out), files);
    const lines = [
      ...difference.stale.map((path) => `stale:   ${options.out}/${path}`),
      ...difference.missing.map((path) => `missing: ${options.out}/${path}`),
      ...difference.extra.map((path) => `extra:   ${options.out}/${path}`),
    ];
    if (lines.length === 0) {
      process.stdout.write(`entigen: ${options.out}/ is up to date (${files.size} files)\n`);
      return;
    }
    process.stderr.write(`${lines.join('\n')}\nentigen: ${options.out}/ is out of date; run \`entigen build\`\n`);
    process.exitCode = 1;
  } catch (error) {
    reportFailure(error);
  }
}
