import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MIGRATIONS_DIR, readMigrationFiles } from '../runtime/model/readMigrationFiles.js';
import type { AppModel } from '../runtime/model/types.js';
import type { Diagnostic } from './diagnostics.js';
import { type BreakingChange, breakingChanges } from './model/diffModels.js';

export { MIGRATIONS_DIR };

/** The previous build's model, read from the output folder's metadata.json; undefined on a first build. */
export function previousModel(root: string, outDir: string): AppModel | undefined {
  const path = resolve(root, outDir, 'metadata.json');
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
  return new Set(readMigrationFiles(root).flatMap((migration) => migration.covers));
}

/** Breaking changes from `previous` to `next` that no migration covers. */
export function uncoveredChanges(
  previous: AppModel | undefined,
  next: AppModel,
  covered: Set<string>,
): BreakingChange[] {
  return previous ? breakingChanges(previous, next).filter((change) => !covered.has(change.key)) : [];
}

/** Breaking changes as diagnostics on their entity files. */
export function changeDiagnostics(
  changes: readonly BreakingChange[],
  fileOf: (plural: string) => string,
): Diagnostic[] {
  return changes.map((change: BreakingChange) => ({
    file: fileOf(change.entity),
    line: 1,
    col: 1,
    path: change.field ? `fields.${change.field}` : '',
    message: `${change.description}: existing records need a migration covering "${change.key}" (entigen migrate --create NAME)`,
  }));
}
