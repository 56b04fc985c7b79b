import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { stringify } from 'yaml';
import { checkedModel } from '../../generator/build.js';
import { coveredChanges, MIGRATIONS_DIR, previousModel } from '../../generator/migrations.js';
import { breakingChanges } from '../../generator/model/diffModels.js';
import { readInputs } from '../../generator/readInputs.js';
import { SYSTEM_CALLER } from '../../runtime/context/caller.js';
import { applyMigrations, type MigrationScript } from '../../runtime/migrations/applyMigrations.js';
import { repositoryWriter } from '../../runtime/write/writePipeline.js';
import { commandContext, openCommandStore } from './commandContext.js';
import { reportFailure } from './reportFailure.js';
import { loadGenerated } from './serveCommand.js';

export interface MigrateOptions {
  create?: string;
  entities: string;
  out: string;
}

/** `entigen migrate`: pending migrations applied in order on the store DATABASE_URL names, with progress. */
async function applyPending(options: MigrateOptions): Promise<void> {
  const root = resolve('.');
  const generated = await loadGenerated(root, options.out);
  const { registry } = generated;
  const store = await openCommandStore(root, registry.model);
  try {
    const ctx = await commandContext(registry, store, 'migrate');
    ctx.repositoriesFor = (scope) =>
      generated.repositories?.(
        scope.ctx.store,
        repositoryWriter(() => scope),
      );
    const applied = await applyMigrations({
      store,
      registry,
      root,
      now: () => new Date(),
      // A script's repository writes run the entities' hooks inside the migration's transaction.
      repositories: (tx) =>
        ctx.repositoriesFor?.({
          ctx: { ...ctx, store: tx },
          caller: SYSTEM_CALLER,
          now: new Date(),
          origin: 'script',
          depth: 0,
          path: [],
        }),
      log: (line) => process.stdout.write(`entigen: ${line}\n`),
      loadScript: async (path) => {
        const file = resolve(root, path);
        if (!existsSync(file)) throw new Error(`migration script ${path} does not exist`);
        const module = (await tsImport(pathToFileURL(file).href, import.meta.url)) as {
          default?: MigrationScript | { default?: MigrationScript };
        };
        // A .ts file outside an ESM package loads as CommonJS, its default export one level down.
        return (typeof module.default === 'function' ? module.default : module.default?.default) as MigrationScript;
      },
    });
    if (applied.length > 0) process.stdout.write(`entigen: applied ${applied.length} migration(s)\n`);
  } finally {
    await store.close();
  }
}

/** `entigen migrate --create NAME`: a migration file covering the breaking changes the next build would refuse. */
export async function migrateCommand(options: MigrateOptions): Promise<void> {
  try {
    if (!options.create) return await applyPending(options);
    if (!/^[a-z0-9][a-z0-9-]{0,60}$/.test(options.create))
      throw new Error('the migration name must be lower case letters, digits and -');
    const root = process.cwd();
    const model = checkedModel(readInputs(root, options.entities));
    const previous = previousModel(root, options.out);
    const covered = coveredChanges(root);
    const changes = previous ? breakingChanges(previous, model).filter((c) => !covered.has(c.key)) : [];
    if (changes.length === 0) {
      process.stdout.write('entigen: no uncovered breaking changes; no migration needed\n');
      return;
    }
    const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const dir = join(root, MIGRATIONS_DIR);
    const file = join(dir, `${stamp}_${options.create}.yaml`);
    if (existsSync(file)) throw new Error(`${file} already exists`);
    mkdirSync(dir, { recursive: true });
    const fillable = changes.filter((c) => c.field && /required/.test(c.key));
    const header = [
      `# ${options.create}: breaking changes detected by entigen against ${options.out}/metadata.json.`,
      '# Listing a change under covers lets `entigen build` accept it. Existing records keep their',
      '# stored values; steps, applied in order by `entigen migrate` (the server will not start until',
      '# it has), change them where the new shape needs it:',
      '#   - fill: { entity: PLURAL, field: NAME, value: VALUE }  # sets the field where it is unset',
      '#   - script: migrations/NAME.ts  # default export async ({ store, model, log, repositories }) => { ... }',
      ...fillable.map(
        (c) => `# for example: steps: [ { fill: { entity: ${c.entity}, field: ${c.field}, value: ... } } ]`,
      ),
    ].join('\n');
    writeFileSync(
      file,
      `${header}\n${stringify({ version: 1, name: options.create, covers: changes.map((c) => c.key) })}`,
    );
    process.stdout.write(
      `entigen: wrote ${MIGRATIONS_DIR}/${stamp}_${options.create}.yaml covering ${changes.length} change(s):\n`,
    );
    for (const change of changes) process.stdout.write(`  ${change.key}\n`);
  } catch (error) {
    reportFailure(error);
  }
}
