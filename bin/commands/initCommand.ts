import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import { reportFailure } from './reportFailure.js';

const TEMPLATE = join(packageRoot, 'templates', 'init');
/** What a scaffolded project type-checks with: the TypeScript entigen is built with, Node 20's types. */
const TYPESCRIPT_RANGE = '^5.9.0';
const NODE_TYPES_RANGE = '^20.0.0';

/**
 * Scaffolds a project that builds at once: package.json, entigen.config.yaml, entities/notes.yaml,
 * hooks/notes.ts, a tsconfig.json whose `npm run typecheck` checks the hooks against the
 * generated types, client-example.mts and .gitignore.
 */
export function initCommand(dir = '.'): void {
  try {
    const target = resolve(dir);
    for (const taken of ['entities', 'entigen.config.yaml']) {
      if (existsSync(join(target, taken)))
        throw new Error(`${join(dir, taken)} already exists; init writes only into a new project`);
    }
    const appName = basename(target).replace(/[^A-Za-z0-9_-]/g, '') || 'app';
    const name = /^[A-Za-z]/.test(appName) ? appName : `app-${appName}`;
    mkdirSync(join(target, 'entities'), { recursive: true });
    const written: string[] = [];
    const put = (path: string, text: string) => {
      writeFileSync(join(target, path), text);
      written.push(path);
    };
    if (!existsSync(join(target, 'package.json')))
      put('package.json', `${JSON.stringify(projectManifest(name.toLowerCase(), target), null, 2)}\n`);
    put(
      'entigen.config.yaml',
      readFileSync(join(TEMPLATE, 'entigen.config.yaml'), 'utf8').replace('__APP_NAME__', name),
    );
    put('entities/notes.yaml', readFileSync(join(TEMPLATE, 'entities', 'notes.yaml'), 'utf8'));
    if (!existsSync(join(target, 'hooks', 'notes.ts'))) {
      mkdirSync(join(target, 'hooks'), { recursive: true });
      put('hooks/notes.ts', readFileSync(join(TEMPLATE, 'hooks', 'notes.ts'), 'utf8'));
    }
    if (!existsSync(join(target, 'tsconfig.json')))
      put('tsconfig.json', readFileSync(join(TEMPLATE, 'tsconfig.json'), 'utf8'));
    if (!existsSync(join(target, 'client-example.mts')))
      put('client-example.mts', readFileSync(join(TEMPLATE, 'client-example.mts'), 'utf8'));
    if (!existsSync(join(target, '.gitignore'))) put('.gitignore', readFileSync(join(TEMPLATE, 'gitignore'), 'utf8'));
    const where = relative(process.cwd(), target) || '.';
    process.stdout.write(
      `entigen: created ${written.join(', ')} in ${where}\nnext: cd ${where} && npm install && npm start   (then open http://localhost:3000/setup)\n`,
    );
  } catch (error) {
    reportFailure(error);
  }
}

/** The install scripts an app of entigen needs (npm's `allowScripts`), as entigen's own package.json allows them. */
const ALLOWED_SCRIPTS = { 'better-sqlite3': true, esbuild: true, '@scarf/scarf': false } as const;

/**
 * The new project's package.json. entigen from a git checkout is named by a path relative to the
 * project (`file:../entigen`), which works for teammates and CI with the same layout; an
 * installed entigen (registry or tarball) by its version range.
 */
function projectManifest(name: string, target: string) {
  const version = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')).version as string;
  const checkout = relative(target, packageRoot).split(sep).join('/') || '.';
  const linked = existsSync(join(packageRoot, '.git'));
  // npm links a `file:` checkout and runs its prepare script (which builds it); npm 11 names that
  // script's approval by the checkout's path from the project's node_modules.
  const fromModules = relative(join(target, 'node_modules'), packageRoot).split(sep).join('/');
  return {
    name,
    version: '0.1.0',
    private: true,
    scripts: {
      build: 'entigen build',
      check: 'entigen check',
      start: 'entigen build && exec entigen serve',
      dev: 'entigen dev',
      typecheck: 'entigen build && tsc -p tsconfig.json',
      'client-example': 'entigen run client-example.mts',
    },
    dependencies: { entigen: linked ? `file:${checkout}` : `^${version}` },
    // npm 11 runs a dependency's install script only when allowed: SQLite's binding and esbuild's
    // binary need theirs; a usage report of one of the SDKs does not.
    allowScripts: linked ? { ...ALLOWED_SCRIPTS, [`file:${fromModules}`]: true } : ALLOWED_SCRIPTS,
    // tsc checks hooks, job handlers and scripts against the generated types (npm run typecheck).
    devDependencies: { typescript: TYPESCRIPT_RANGE, '@types/node': NODE_TYPES_RANGE },
  };
}
