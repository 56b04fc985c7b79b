import type { Registry } from '../context/defineRegistry.js';
import { SCHEMA_MIGRATIONS } from '../model/collections.js';
import {
  type FillStep,
  type MigrationFile,
  MigrationFileError,
  readMigrationFiles,
} from '../model/readMigrationFiles.js';
import type { AppModel } from '../model/types.js';
import { validationDetails } from '../model/validationDetails.js';
import { type Store, UniqueConflict } from '../store/types.js';
import { newId } from '../write/prepareWrite.js';

const FILL_BATCH = 500;

/** What a migration script's default export receives; inside the migration's transaction. */
export interface MigrationScriptContext {
  store: Store;
  model: AppModel;
  log: (line: string) => void;
  /** Typed repositories in the migration's transaction: their writes run the entities' hooks, history and event log. */
  repositories?: unknown;
}
export type MigrationScript = (ctx: MigrationScriptContext) => Promise<void> | void;

export interface MigrationRun {
  store: Store;
  registry: Registry;
  root: string;
  now: () => Date;
  log: (line: string) => void;
  /** Imports a step's script (relative to root) and returns its default export. */
  loadScript: (path: string) => Promise<MigrationScript>;
  /** Builds the typed repositories a script gets, over the migration's transaction. */
  repositories?: (tx: Store) => unknown;
}

/** The server would not start: migrations in migrations/ that this store has not applied. */
export class PendingMigrations extends Error {
  constructor(readonly names: string[]) {
    super(`${names.length} pending migration(s): ${names.join(', ')}; run \`entigen migrate\` first`);
  }
}

/** Migration files not yet recorded in the store, in order. */
export async function pendingMigrations(store: Store, root: string, model: AppModel): Promise<MigrationFile[]> {
  const files = readMigrationFiles(root, model);
  if (files.length === 0) return [];
  const applied = await store.find(SCHEMA_MIGRATIONS, { select: ['name'] });
  const names = new Set(applied.map((record) => record.name));
  return files.filter((file) => !names.has(file.name));
}

/**
 * Refuses to go on with pending migrations. A store holding no application records yet has
 * nothing to migrate: every migration is recorded as applied (the baseline of a new deployment).
 */
export async function checkMigrations(store: Store, root: string, model: AppModel, now: () => Date): Promise<void> {
  const pending = await pendingMigrations(store, root, model);
  if (pending.length === 0) return;
  const recorded = await store.count(SCHEMA_MIGRATIONS, {});
  if (recorded === 0 && (await isEmpty(store, model))) {
    for (const migration of pending) await recordBaseline(store, migration, now);
    return;
  }
  throw new PendingMigrations(pending.map((m) => m.name));
}

/** Applies every pending migration in order, each with its record in one transaction. */
export async function applyMigrations(run: MigrationRun): Promise<string[]> {
  const pending = await pendingMigrations(run.store, run.root, run.registry.model);
  if (pending.length === 0) {
    run.log('no pending migrations');
    return [];
  }
  const applied: string[] = [];
  for (const [i, migration] of pending.entries()) {
    run.log(`[${i + 1}/${pending.length}] ${migration.name} (${migration.steps.length} step(s))`);
    const started = Date.now();
    await run.store.transaction(async (tx) => {
      for (const [s, step] of migration.steps.entries()) {
        const where = `${migration.file} steps.${s}`;
        if ('fill' in step) await fill(run, tx, step, where);
        else {
          run.log(`  script ${step.script}`);
          const script = await run.loadScript(step.script);
          if (typeof script !== 'function')
            throw new MigrationFileError(`${where}.script: ${step.script} has no default export function`);
          await script({
            store: tx,
            model: run.registry.model,
            log: (line) => run.log(`    ${line}`),
            repositories: run.repositories?.(tx),
          });
        }
      }
      await tx.insert(SCHEMA_MIGRATIONS, {
        id: newId(),
        name: migration.name,
        appliedAt: run.now().toISOString(),
        steps: migration.steps.length,
      });
    });
    run.log(`  applied in ${Date.now() - started} ms`);
    applied.push(migration.name);
  }
  return applied;
}

async function fill(
  run: MigrationRun,
  store: Store,
  { fill: { entity, field, value } }: FillStep,
  where: string,
): Promise<void> {
  const validators = run.registry.entities.get(entity)?.validators;
  if (validators && !validators.update({ [field]: value })) {
    const details = validationDetails(validators.update.errors ?? []);
    throw new MigrationFileError(
      `${where}.fill.value: ${details[field] ?? Object.values(details)[0] ?? 'is not valid'} for ${entity}.${field}`,
    );
  }
  let total = 0;
  for (;;) {
    const batch = await store.find(entity, {
      where: { field, op: 'eq', value: null },
      limit: FILL_BATCH,
      select: ['id'],
    });
    for (const record of batch) await store.update(entity, record.id, { [field]: value });
    total += batch.length;
    if (batch.length > 0) run.log(`  fill ${entity}.${field}: ${total} record(s)`);
    if (batch.length < FILL_BATCH) break;
  }
  if (total === 0) run.log(`  fill ${entity}.${field}: no record needed it`);
}

async function recordBaseline(store: Store, migration: MigrationFile, now: () => Date): Promise<void> {
  try {
    await store.insert(SCHEMA_MIGRATIONS, {
      id: newId(),
      name: migration.name,
      appliedAt: now().toISOString(),
      steps: 0,
    });
  } catch (error) {
    // Another instance recorded it at the same moment.
    if (!(error instanceof UniqueConflict)) throw error;
  }
}

async function isEmpty(store: Store, model: AppModel): Promise<boolean> {
  for (const entity of model.entities.filter((e) => e.origin === 'app')) {
    if ((await store.find(entity.plural, { limit: 1, select: ['id'] })).length > 0) return false;
  }
  return true;
}
