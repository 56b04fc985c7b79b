import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { packageRoot } from '../../generator/packageRoot.js';
import { reportFailure } from './reportFailure.js';

const TEMPLATE = join(packageRoot, 'templates', 'init');

/** Scaffolds a project that builds at once: package.json, entigen.config.yaml, entities/notes.yaml. */
export function initCommand(dir = '.'): void {
  try {
    const target = resolve(dir);
    for (const taken of ['entities', 'entigen.config.yaml']) {
      if (existsSync(join(target, taken))) throw new Error(`${join(dir, taken)} already exists; init writes only into a new project`);
    }
    const appName = basename(target).replace(/[^A-Za-z0-9_-]/g, '') || 'app';
    const name = /^[A-Za-z]/.test(appName) ? appName : `app-${appName}`;
    mkdirSync(join(target, 'entities'), { recursive: true });
    const written: string[] = [];
    const put = (path: string, text: string) => {
      writeFileSync(join(target, path), text);
      written.push(path);
    };
    if (!existsSync(join(target, 'package.json'))) put('package.json', `${JSON.stringify(projectManifest(name.toLowerCase()), null, 2)}\n`);
    put('entigen.config.yaml', readFileSync(join(TEMPLATE, 'entigen.config.yaml'), 'utf8').replace('__APP_NAME__', name));
    put('entities/notes.yaml', readFileSync(join(TEMPLATE, 'entities', 'notes.yaml'), 'utf8'));
    if (!existsSync(join(target, '.gitignore'))) put('.gitignore', readFileSync(join(TEMPLATE, 'gitignore'), 'utf8'));
    const where = relative(process.cwd(), target) || '.';
    process.stdout.write(
      `entigen: created ${written.join(', ')} in ${where}\nnext: cd ${where} && npm install && npm start   (then open http://localhost:3000/setup)\n`,
    );
  } catch (error) {
    reportFailure(error);
  }
}

function projectManifest(name: string) {
  const version = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')).version as string;
  return {
    name,
    version: '0.1.0',
    private: true,
    scripts: { build: 'entigen build', check: 'entigen check', start: 'entigen build && entigen serve', dev: 'entigen dev' },
    // A local checkout or tarball of entigen; replace with a registry version once published.
    dependencies: { entigen: existsSync(join(packageRoot, '.git')) ? `file:${packageRoot}` : `^${version}` },
  };
}
