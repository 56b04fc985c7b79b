import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { buildFromInputs } from '../../generator/build.js';
import { MIGRATIONS_DIR, coveredChanges, previousModel } from '../../generator/migrations.js';
import { breakingChanges } from '../../generator/model/diffModels.js';
import { readInputs } from '../../generator/readInputs.js';
import { reportFailure } from './reportFailure.js';

export interface MigrateOptions {
  create?: string;
  entities: string;
  out: string;
}

/** `entigen migrate --create NAME`: a migration file covering the breaking changes the next build would refuse. */
export async function migrateCommand(options: MigrateOptions): Promise<void> {
  try {
    if (!options.create) throw new Error('applying migrations is not available in this version; use --create NAME to record breaking changes');
    if (!/^[a-z0-9][a-z0-9-]{0,60}$/.test(options.create)) throw new Error('the migration name must be lower case letters, digits and -');
    const root = process.cwd();
    const { model } = await buildFromInputs(readInputs(root, options.entities));
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
    const header = [
      `# ${options.create}: breaking changes detected by entigen against ${options.out}/metadata.json.`,
      '# Listing a change under covers lets `entigen build` accept it; existing records keep their',
      '# stored values, so change them yourself where the new shape needs it.',
    ].join('\n');
    writeFileSync(file, `${header}\n${stringify({ version: 1, name: options.create, covers: changes.map((c) => c.key) })}`);
    process.stdout.write(`entigen: wrote ${MIGRATIONS_DIR}/${stamp}_${options.create}.yaml covering ${changes.length} change(s):\n`);
    for (const change of changes) process.stdout.write(`  ${change.key}\n`);
  } catch (error) {
    reportFailure(error);
  }
}
