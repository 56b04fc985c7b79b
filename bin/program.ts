import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { packageRoot } from '../runtime/model/packageRoot.js';

/**
 * A command's action, loaded when that command runs: `entigen build` never loads the server,
 * the stores or the identity providers.
 */
function lazy<K extends string>(
  load: () => Promise<Record<K, (...args: never[]) => unknown>>,
  name: K,
): (...args: unknown[]) => Promise<void> {
  return async (...args) => {
    await ((await load())[name] as (...args: unknown[]) => unknown)(...args);
  };
}

/** The CLI: every command with its arguments and options (the reference page is written from it). */
export function entigenProgram(): Command {
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  const program = new Command()
    .name('entigen')
    .description('Turns YAML entity descriptions into a complete REST/JSON backend.')
    .version(version)
    .showHelpAfterError();

  const withPaths = (command: Command) =>
    command
      .option('--entities <dir>', 'folder of entity YAML files', 'entities')
      .option('--out <dir>', 'folder of generated files', 'generated');

  program
    .command('init')
    .description('scaffold a project: package.json, entigen.config.yaml, entities/notes.yaml')
    .argument('[dir]', 'project folder', '.')
    .action(lazy(() => import('./commands/initCommand.js'), 'initCommand'));

  withPaths(program.command('build').description('write the generated files for the entities'))
    .option(
      '--reset-baseline',
      'while prototyping: accept breaking changes without a migration for entities whose tables hold no records',
    )
    .option('--no-typecheck', "skip type-checking hooks/ and jobs/ with the project's TypeScript")
    .action(lazy(() => import('./commands/buildCommand.js'), 'buildCommand'));

  withPaths(
    program
      .command('dev')
      .description('build and serve, then rebuild and restart on every change of the entity files or the config')
      .option('--port <n>', 'port to listen on (PORT, default 3000)')
      .option('--host <h>', 'address to listen on (HOST, default 0.0.0.0)'),
  ).action(lazy(() => import('./commands/devCommand.js'), 'devCommand'));

  withPaths(program.command('openapi').description('print the OpenAPI 3.1 document of the entities (JSON)')).action(
    lazy(() => import('./commands/openapiCommand.js'), 'openapiCommand'),
  );

  withPaths(
    program
      .command('indexes')
      .description('print the indexes every store keeps for the entities, with the list query each serves')
      .argument('[entity]', 'one entity (plural)'),
  ).action(lazy(() => import('./commands/indexesCommand.js'), 'indexesCommand'));

  withPaths(
    program
      .command('check')
      .description('exit 1 and list stale, missing and extra files when the generated files are out of date'),
  ).action(lazy(() => import('./commands/checkCommand.js'), 'checkCommand'));

  program
    .command('serve')
    .description('serve the built app (DATABASE_URL picks the store; default data/entigen.db)')
    .option('--port <n>', 'port to listen on (PORT, default 3000)')
    .option('--host <h>', 'address to listen on (HOST, default 0.0.0.0)')
    .option('--out <dir>', 'folder of generated files', 'generated')
    .action(lazy(() => import('./commands/serveCommand.js'), 'serveCommand'));

  withPaths(
    program
      .command('migrate')
      .description(
        'apply pending migrations from migrations/ to the store DATABASE_URL names; --create NAME records breaking entity changes',
      )
      .option('--create <name>', 'write a migration file covering the changes the next build would refuse'),
  ).action(lazy(() => import('./commands/migrateCommand.js'), 'migrateCommand'));

  program
    .command('setup')
    .description('create the first administrator without the browser (fails once one exists)')
    .requiredOption('--email <email>', 'administrator email')
    .requiredOption('--password <password>', 'administrator password (the password policy applies)')
    .option('--name <name>', 'display name', 'Administrator')
    .option('--tenant <name>', 'name of the first tenant, when tenancy is configured', 'Default')
    .option('--out <dir>', 'folder of generated files', 'generated')
    .action(lazy(() => import('./commands/setupCommand.js'), 'setupCommand'));

  program
    .command('run')
    .description(
      "run a TypeScript or JavaScript file of the project (a script using generated/, such as client-example.mts) through entigen's tsx",
    )
    .argument('<file>', 'the file to run')
    .argument('[args...]', 'arguments the file sees in process.argv')
    .allowUnknownOption()
    .action(lazy(() => import('./commands/runCommand.js'), 'runCommand'));

  program
    .command('backup')
    .description(
      'a consistent copy of the database and the media files while the server runs (SQLite: online backup; PostgreSQL: pg_dump when installed; else a logical export), as one .tar.gz',
    )
    .option('--to <place>', 'a folder, a .tar.gz file, or s3://bucket/prefix/ (default: backups.to, else backups/)')
    .option('--logical', 'a logical export of every record, restorable to any store')
    .option('--keep <n>', 'keep only the newest n backups in the folder or prefix')
    .option('--out <dir>', 'folder of generated files', 'generated')
    .action(lazy(() => import('./commands/backupCommand.js'), 'backupCommand'));

  program
    .command('restore')
    .description(
      'restore a backup into the empty database DATABASE_URL names, and its media files into the configured storage',
    )
    .argument('<from>', 'a backup file or s3:// object, or a folder or s3:// prefix (its newest backup)')
    .option('--out <dir>', 'folder of generated files', 'generated')
    .action(lazy(() => import('./commands/backupCommand.js'), 'restoreCommand'));

  program
    .command('export')
    .description('write the records of an entity (or of every entity) as the API shows them, JSON lines or CSV')
    .argument('[plural]', 'the entity')
    .option('--all', 'every entity, one file each into --to FOLDER')
    .option('--format <format>', 'jsonl or csv (default: from the --to file name, else jsonl)')
    .option('--where <query>', "the list endpoint's filters, as in kind=news&views[gte]=100&dateFrom=2026-01-01")
    .option('--to <path>', 'the file (or, with --all, the folder) to write; default: stdout')
    .option(
      '--keep-formulas',
      'CSV: write text that starts with = + - @ (or a tab, a carriage return, an apostrophe) as it is; by default it gets a leading apostrophe so that a spreadsheet shows it instead of running it (entigen import takes the apostrophe away again)',
    )
    .option('--out <dir>', 'folder of generated files', 'generated')
    .action(lazy(() => import('./commands/transferCommands.js'), 'exportCommand'));

  program
    .command('import')
    .description(
      "create records from a JSON-lines or CSV file through the entity's validator, references and unique constraints; all or nothing unless --continue-on-error",
    )
    .argument('<plural>', 'the entity')
    .argument('<file>', 'a .jsonl or .csv file (a CSV has a header row of field names)')
    .option('--format <format>', 'jsonl or csv (default: from the file name)')
    .option('--dry-run', 'check and write everything, then roll it back: what would happen')
    .option('--continue-on-error', 'write the good lines in batches and report the bad ones')
    .option('--hooks', "run the entity's beforeCreate hooks and log events (afterCommit hooks, webhooks, realtime)")
    .option('--from-line <n>', 'skip the lines before this one (resume an import)')
    .option('--ids <keep|new>', "keep the file's ids (default) or give every record a new one")
    .option('--id-map <file>', 'with --ids new: write line,from,to for every record (CSV)')
    .option('--owner <user>', 'owner (id or email) of owned records the file gives no ownerId')
    .option('--out <dir>', 'folder of generated files', 'generated')
    .action(lazy(() => import('./commands/transferCommands.js'), 'importCommand'));

  program
    .command('recover-admin')
    .description(
      'make the account with this email an enabled local administrator with this password (created if missing); for when every admin is locked out',
    )
    .requiredOption('--email <email>', 'administrator email')
    .requiredOption('--password <password>', 'new password (the password policy applies)')
    .option('--name <name>', 'display name, when the account is created', 'Administrator')
    .option('--out <dir>', 'folder of generated files', 'generated')
    .action(lazy(() => import('./commands/setupCommand.js'), 'recoverAdminCommand'));
  return program;
}
