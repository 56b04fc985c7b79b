import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { listFiles } from './compareOutput.js';

export interface WriteSummary {
  written: string[];
  unchanged: number;
  removed: string[];
}

/**
 * Makes `outDir` hold exactly `files`: changed files are written, files build no longer
 * produces are removed. Refuses a non-empty folder that build did not write before.
 */
export function writeOutput(outDir: string, files: Map<string, string>): WriteSummary {
  const present = listFiles(outDir);
  if (present.length > 0 && !present.includes('metadata.json')) {
    throw new Error(
      `${outDir} holds files but no metadata.json: not an entigen output folder, refusing to overwrite it`,
    );
  }
  const summary: WriteSummary = { written: [], unchanged: 0, removed: [] };
  const madeDirs = new Set<string>();
  for (const [path, text] of files) {
    const target = join(outDir, path);
    if (existsSync(target) && readFileSync(target, 'utf8') === text) {
      summary.unchanged++;
      continue;
    }
    if (!madeDirs.has(dirname(target))) {
      mkdirSync(dirname(target), { recursive: true });
      madeDirs.add(dirname(target));
    }
    writeFileSync(target, text);
    summary.written.push(path);
  }
  for (const path of present) {
    if (files.has(path)) continue;
    rmSync(join(outDir, path));
    summary.removed.push(path);
  }
  return summary;
}
