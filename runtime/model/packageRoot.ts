import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The entigen package's own folder, found from this file whether it runs from dist/ or the sources. */
export const packageRoot: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'entigen') return dir;
    if (dirname(dir) === dir) throw new Error(`entigen: cannot find the package root above ${start}`);
  }
}

let version: string | undefined;

/** The entigen package's version, from its package.json (read once). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
