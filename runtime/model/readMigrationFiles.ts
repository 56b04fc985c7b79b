import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { AppModel } from './types.js';

export const MIGRATIONS_DIR = 'migrations';

/** Sets a field on every record where it is unset: the data step for a new required field. */
export interface FillStep {
  fill: { entity: string; field: string; value: unknown };
}
/** A module whose default export receives the store: any other data change. */
export interface ScriptStep {
  script: string;
}
export type MigrationStep = FillStep | ScriptStep;

export interface MigrationFile {
  /** The file name without its extension; files apply in the order of their names. */
  name: string;
  file: string;
  covers: string[];
  steps: MigrationStep[];
}

/** A migration file that cannot be applied as written. */
export class MigrationFileError extends Error {}

/** Every migration in `migrations/`, in order, with its steps checked against the model. */
export function readMigrationFiles(root: string, model?: AppModel): MigrationFile[] {
  const dir = join(root, MIGRATIONS_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((file) => parseMigration(file, readFileSync(join(dir, file), 'utf8'), model));
}

function parseMigration(file: string, text: string, model: AppModel | undefined): MigrationFile {
  const where = `${MIGRATIONS_DIR}/${file}`;
  let data: unknown;
  try {
    data = parse(text);
  } catch (error) {
    throw new MigrationFileError(`${where}: not valid YAML: ${(error as Error).message}`);
  }
  const body = (data ?? {}) as { covers?: unknown; steps?: unknown };
  if (typeof body !== 'object' || Array.isArray(body))
    throw new MigrationFileError(`${where}: must be a mapping with covers and steps`);
  const covers = Array.isArray(body.covers) ? body.covers.filter((c): c is string => typeof c === 'string') : [];
  if (body.steps !== undefined && !Array.isArray(body.steps))
    throw new MigrationFileError(`${where}: steps must be a list`);
  const steps = ((body.steps as unknown[] | undefined) ?? []).map((step, i) =>
    checkStep(step, `${where} steps.${i}`, model),
  );
  return { name: file.replace(/\.ya?ml$/, ''), file: where, covers, steps };
}

function checkStep(step: unknown, where: string, model: AppModel | undefined): MigrationStep {
  const keys = step && typeof step === 'object' && !Array.isArray(step) ? Object.keys(step) : [];
  if (keys.length !== 1 || !['fill', 'script'].includes(keys[0]))
    throw new MigrationFileError(`${where}: a step is one of { fill: { entity, field, value } } or { script: PATH }`);
  if ('script' in (step as object)) {
    const script = (step as ScriptStep).script;
    if (typeof script !== 'string' || !/\.(ts|js|mjs)$/.test(script))
      throw new MigrationFileError(`${where}.script: must name a .ts, .js or .mjs file`);
    return { script };
  }
  const fill = (step as FillStep).fill as Partial<FillStep['fill']> | null;
  if (
    !fill ||
    typeof fill.entity !== 'string' ||
    typeof fill.field !== 'string' ||
    !('value' in fill) ||
    fill.value === null
  ) {
    throw new MigrationFileError(`${where}.fill: needs entity, field and a non-null value`);
  }
  if (model) {
    const entity = model.entities.find((e) => e.plural === fill.entity);
    if (!entity) throw new MigrationFileError(`${where}.fill.entity: unknown entity ${fill.entity}`);
    if (!entity.fields.some((f) => f.name === fill.field && !f.system))
      throw new MigrationFileError(`${where}.fill.field: ${fill.entity} has no field ${fill.field}`);
  }
  return { fill: { entity: fill.entity, field: fill.field, value: fill.value } };
}
