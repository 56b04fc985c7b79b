import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { AppModel } from '../runtime/model/types.js';
import type { Diagnostic } from './diagnostics.js';
import { breakingChanges, type BreakingChange } from './model/diffModels.js';

export const MIGRATIONS_DIR = 'migrations';

/** The previous build's model, read from the output folder's metadata.json; undefined on a first build. */
export function previousModel(root: string, outDir: string): AppModel | undefined {
  const path = join(root, outDir, 'metadata.json');
  if (!existsSync(path)) return undefined;
  try {
    const model = JSON.parse(readFileSync(path, 'utf8')) as AppModel;
    return model?.version === 1 && Array.isArray(model.entities) ? model : undefined;
  } catch {
    return undefined;
  }
}

/** Every change key the migration files list under `covers`. */
export function coveredChanges(root: string): Set<string> {
  const dir = join(root, MIGRATIONS_DIR);
  const covered = new Set<string>();
  if (!existsSync(dir)) return covered;
  for (const name of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort()) {
    const data = parse(readFileSync(join(dir, name), 'utf8')) as { covers?: unknown } | null;
    if (Array.isArray(data?.covers)) for (const key of data.covers) if (typeof key === 'string') covered.add(key);
  }
  return covered;
}

/** Breaking changes no migration covers, as diagnostics on the entity files. */
export function uncoveredChanges(previous: AppModel | undefined, next: AppModel, covered: Set<string>, fileOf: (plural: string) => string): Diagnostic[] {
  if (!previous) return [];
  return breakingChanges(previous, next)
    .filter((change) => !covered.has(change.key))
    .map((change: BreakingChange) => ({
      file: fileOf(change.entity),
      line: 1,
      col: 1,
      path: change.field ? `fields.${change.field}` : '',
      message: `${change.description}: existing records need a migration covering "${change.key}" (entigen migrate --create NAME)`,
    }));
}
