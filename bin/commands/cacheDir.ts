import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The folder key of what build, check and dev keep from earlier builds: the parsed entity files
 * (generator/schema/parsedYamlCache.ts) and the compiled validators (generator/emit/validatorCache.ts).
 */
export const PARSED_CACHE = 'parsed';

/** The hex SHA-1 of a text: the caches' keys. */
export const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/**
 * ENTIGEN_MODULE_CACHE, else the project's node_modules/.cache, else the system's temporary
 * folder: the first that takes a file; undefined when none does. In the temporary folder, which
 * other users share, only a folder this user owns and nobody else may write is used: what the
 * caches hold is run as the server's code (the project's modules) or read as its model (the
 * parsed entity files, the validators written into generated/). `key` names the cache's own folder.
 */
export function cacheDir(root: string, key: string): string | undefined {
  const shared = join(tmpdir(), `entigen-modules-${sha1(root).slice(0, 12)}`);
  const candidates = [
    ...(process.env.ENTIGEN_MODULE_CACHE ? [join(resolve(process.env.ENTIGEN_MODULE_CACHE), key)] : []),
    ...(existsSync(join(root, 'node_modules')) ? [join(root, 'node_modules', '.cache', 'entigen', key)] : []),
    join(shared, key),
  ];
  for (const dir of candidates) {
    try {
      if (dir.startsWith(shared)) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (!ownedPrivately(shared) || !ownedPrivately(dir)) continue;
      } else mkdirSync(dir, { recursive: true });
      const probe = join(dir, `.probe-${process.pid}`);
      writeFileSync(probe, '');
      unlinkSync(probe);
      return dir;
    } catch {
      // Read-only or not ours: try the next place.
    }
  }
  return undefined;
}

/** A real folder (not a link) of this user that no one else may write. */
function ownedPrivately(dir: string): boolean {
  const stats = lstatSync(dir);
  return stats.isDirectory() && stats.uid === process.getuid?.() && (stats.mode & 0o022) === 0;
}
