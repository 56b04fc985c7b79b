import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export interface OutputDifference {
  stale: string[];
  missing: string[];
  extra: string[];
}

/** What differs between the files build would write and what the output folder holds. */
export function compareOutput(outDir: string, files: Map<string, string>): OutputDifference {
  const present = new Set(listFiles(outDir));
  const difference: OutputDifference = { stale: [], missing: [], extra: [] };
  for (const [path, text] of files) {
    if (!present.has(path)) difference.missing.push(path);
    else if (readFileSync(join(outDir, path), 'utf8') !== text) difference.stale.push(path);
  }
  difference.extra = [...present].filter((path) => !files.has(path)).sort();
  return difference;
}

/** Every file below `dir`, as `/`-separated relative paths in sorted order. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}
