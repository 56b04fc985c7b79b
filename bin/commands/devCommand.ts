import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, type FSWatcher, readFileSync, watch } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from '../../generator/build.js';
import { BuildFailure, formatDiagnostic } from '../../generator/diagnostics.js';
import { hooksDirOf, jobHandlersOf } from '../../generator/readInputs.js';
import { OutputWriter } from '../../generator/writeOutput.js';
import { MIGRATIONS_DIR } from '../../runtime/model/readMigrationFiles.js';
import { cacheDir, PARSED_CACHE } from './cacheDir.js';
import { recordCounts } from './recordCounts.js';
import { reportFailure } from './reportFailure.js';

export interface DevOptions {
  entities: string;
  out: string;
  port?: string;
  host?: string;
}

const CONFIG_FILES = ['entigen.config.yaml', 'entigen.config.yml'];
/** Edits arrive as bursts of events; one rebuild per burst. */
const SETTLE_MS = 80;
/** A server that does not stop on SIGTERM within this is killed. */
const STOP_MS = 1500;

const cliPath = fileURLToPath(new URL('../entigen.js', import.meta.url));
const say = (line: string) => process.stderr.write(`entigen dev: ${line}\n`);

/**
 * `entigen dev`: builds, serves (`entigen serve` as a child process), and on every change of the
 * entity files, the config, the migrations, the hooks or the job handlers rebuilds and restarts
 * the server. A failing build prints its errors and keeps the last good server running.
 */
export async function devCommand(options: DevOptions): Promise<void> {
  const root = process.cwd();
  let server: ChildProcess | undefined;
  let building = false;
  let again = false;

  const startServer = () => {
    const args = [cliPath, 'serve', '--out', options.out];
    if (options.port !== undefined) args.push('--port', options.port);
    if (options.host !== undefined) args.push('--host', options.host);
    // Stack traces name the lines of the project's sources, not of the compiled bundle.
    const child = spawn(process.execPath, ['--enable-source-maps', ...args], {
      cwd: root,
      stdio: 'inherit',
      env: process.env,
    });
    child.on('exit', (code, signal) => {
      if (server === child && signal === null)
        say(`the server exited with code ${code}; waiting for a change to start it again`);
      if (server === child) server = undefined;
    });
    server = child;
  };

  const stopServer = async () => {
    const child = server;
    if (!child || child.exitCode !== null) return;
    server = undefined;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
    await exited;
    clearTimeout(timer);
  };

  /** Builds; on success restarts the server. Returns whether the build succeeded. */
  const rebuild = async (reason: string): Promise<boolean> => {
    if (building) {
      again = true;
      return false;
    }
    building = true;
    const started = performance.now();
    try {
      const writer = new OutputWriter(resolve(root, options.out));
      const { model, files } = await build({
        root,
        entitiesDir: options.entities,
        outDir: options.out,
        writer,
        cacheDir: cacheDir(root, PARSED_CACHE),
        // While the database holds no records, a removed or renamed field needs no migration.
        records: (plurals) => recordCounts(root, process.env.DATABASE_URL, plurals),
        onAccepted: say,
      });
      const summary = writer.finish(files);
      say(
        `${reason}: ${model.entities.length} entities built (${summary.written.length} files written) in ${Math.round(performance.now() - started)} ms`,
      );
      await stopServer();
      startServer();
      return true;
    } catch (error) {
      if (error instanceof BuildFailure) {
        for (const diagnostic of error.diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
        say(
          `${error.summary}; ${server ? 'the previous build keeps serving' : 'nothing to serve yet'}; fix the file and save`,
        );
      } else {
        say(`build failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      return false;
    } finally {
      building = false;
      if (again) {
        again = false;
        void rebuild('changed while building');
      }
    }
  };

  let timer: NodeJS.Timeout | undefined;
  const changed = (what: string) => {
    clearTimeout(timer);
    timer = setTimeout(() => void rebuild(`${what} changed`), SETTLE_MS);
  };

  // Folders are watched, never files: editors that save by writing a new file and renaming it over
  // the old one (vim, JetBrains, sed -i) replace the file, and a watch on the old file goes silent.
  // Entity files and migrations sit at the top of their folders, so no recursive watch is needed.
  // Code folders (hooks, job handlers) are watched recursively: a module may import its neighbours.
  const watchers = new Map<string, FSWatcher>();
  const watchFolder = (dir: string, label: string, recursive = false) => {
    if (watchers.has(dir) || !existsSync(dir)) return;
    const watcher = watch(dir, { recursive }, (_event, file) => {
      const name = file ? String(file) : '';
      // Editors' swap and backup files are not code.
      if (recursive && /(^|\/)\.|~$|\.swp$/.test(name)) return;
      changed(name ? `${label}/${name}` : label);
    });
    watcher.on('error', () => watchers.delete(dir));
    watchers.set(dir, watcher);
  };
  const migrationsDir = resolve(root, MIGRATIONS_DIR);
  /** The hooks folder and the job handlers' folder the config names now (they may move with it). */
  const codeFolders = (): string[] => {
    const config = CONFIG_FILES.map((name) => resolve(root, name)).find((path) => existsSync(path));
    const text = config ? readFileSync(config, 'utf8') : undefined;
    const handlers = jobHandlersOf(text);
    return [hooksDirOf(text), ...(handlers ? [dirname(handlers)] : [])]
      .map((dir) => relative(root, resolve(root, dir)))
      .filter((dir) => dir !== '' && !dir.startsWith('..'));
  };
  const watchCode = () => {
    for (const dir of codeFolders()) watchFolder(resolve(root, dir), dir, true);
  };
  try {
    const entitiesDir = resolve(root, options.entities);
    if (!existsSync(entitiesDir)) throw new Error(`${options.entities}/ not found; run \`entigen init\` first`);
    watchFolder(entitiesDir, options.entities.replace(/\/+$/, ''));
    watchFolder(migrationsDir, MIGRATIONS_DIR);
    watchCode();
    const rootWatcher = watch(root, (_event, file) => {
      const name = file ? String(file) : '';
      if (CONFIG_FILES.includes(name)) {
        watchCode();
        changed(name);
      } else if (name === MIGRATIONS_DIR && existsSync(migrationsDir)) {
        watchFolder(migrationsDir, MIGRATIONS_DIR);
        changed(`${MIGRATIONS_DIR}/`);
      } else if (codeFolders().includes(name) && existsSync(resolve(root, name))) {
        watchCode();
        changed(`${name}/`);
      }
    });
    watchers.set(root, rootWatcher);
  } catch (error) {
    reportFailure(error);
    return;
  }
  say(
    `watching ${[`${options.entities}/`, `${MIGRATIONS_DIR}/`, ...codeFolders().map((dir) => `${dir}/`), CONFIG_FILES[0]].join(', ')}`,
  );
  await rebuild('start');

  const shutdown = async () => {
    for (const watcher of watchers.values()) watcher.close();
    clearTimeout(timer);
    await stopServer();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
}
