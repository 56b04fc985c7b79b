import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compiledEntries } from './projectModules.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('compiled project modules', () => {
  const made: string[] = [];
  let project: string;
  let cache: string;

  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), text);
  };

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'entigen-modules-project-'));
    cache = mkdtempSync(join(tmpdir(), 'entigen-modules-cache-'));
    made.push(project, cache);
    // The project's packages, as an installed project has them.
    symlinkSync(join(repo, 'node_modules'), join(project, 'node_modules'));
    process.env.ENTIGEN_MODULE_CACHE = cache;
    write(
      'lib/counter.ts',
      `import { stringify } from 'yaml';
      export const here: string = import.meta.url;
      export const folder: string = import.meta.dirname;
      let count = 0;
      export const next = (): number => ++count;
      export const yaml = (value: unknown): string => stringify(value);\n`,
    );
    write(
      'generated/index.ts',
      `export { next, here, folder, yaml } from '../lib/counter.js';\nexport const registry = {};\n`,
    );
    write('jobs/handlers.ts', `import { next } from '../lib/counter';\nexport const tick = () => next();\n`);
  });
  afterEach(() => {
    delete process.env.ENTIGEN_MODULE_CACHE;
  });
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  const entries = () => [join(project, 'generated', 'index.ts'), join(project, 'jobs', 'handlers.ts')];

  it('compiles the entries into plain modules that keep their sources addresses and share what both import', async () => {
    const compiled = await compiledEntries(project, entries());
    expect(compiled).toMatchObject({ from: 'compiled' });
    const files = 'files' in compiled ? compiled.files : undefined;
    expect(files).toHaveLength(2);
    expect(files!.every((file) => file.startsWith(cache) && file.endsWith('.mjs'))).toBe(true);
    const [index, jobs] = await Promise.all(files!.map((file) => import(pathToFileURL(file).href)));
    expect(index.here).toBe(pathToFileURL(join(project, 'lib', 'counter.ts')).href);
    expect(index.folder).toBe(join(project, 'lib'));
    expect(index.yaml({ a: 1 })).toBe('a: 1\n');
    // One module for both entries: the counter they share counts on.
    expect(index.next()).toBe(1);
    expect(jobs.tick()).toBe(2);
    // The package stays a module of its own, imported from where the project installs it.
    const chunk = readdirSync(dirname(files![0]))
      .filter((name) => name.endsWith('.mjs'))
      .map((name) => readFileSync(join(dirname(files![0]), name), 'utf8'))
      .join('\n');
    expect(chunk).toContain(pathToFileURL(join(repo, 'node_modules', 'yaml')).href);
  });

  it('keeps require() working in a CommonJS source', async () => {
    write(
      'lib/legacy.cts',
      `const { stringify } = require('yaml');\nconst { sep } = require('node:path');\nmodule.exports = { dump: (v: unknown) => stringify(v), sep };\n`,
    );
    write(
      'generated/index.ts',
      `import legacy from '../lib/legacy.cjs';\nexport const { dump, sep } = legacy;\nexport const registry = {};\n`,
    );
    const compiled = await compiledEntries(project, entries());
    if (!('files' in compiled)) throw new Error(compiled.reason);
    const index = await import(pathToFileURL(compiled.files[0]).href);
    expect(index.dump({ b: 2 })).toBe('b: 2\n');
    expect(index.sep).toBe('/');
  });

  it('leaves a module its own require made with createRequire', async () => {
    write(
      'lib/own.ts',
      `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nexport const yamlVersion: string = require('yaml/package.json').version;\n`,
    );
    write('generated/index.ts', `export { yamlVersion } from '../lib/own.js';\nexport const registry = {};\n`);
    const compiled = await compiledEntries(project, entries());
    if (!('files' in compiled)) throw new Error(compiled.reason);
    const index = await import(pathToFileURL(compiled.files[0]).href);
    expect(index.yamlVersion).toMatch(/^\d+\./);
  });

  /** The compiled files, failing the test when tsx would have had to load them. */
  const filesOf = async () => {
    const compiled = await compiledEntries(project, entries());
    if (!('files' in compiled)) throw new Error(compiled.reason);
    return compiled;
  };

  it('reuses the cache while the sources are unchanged and compiles again when one changes', async () => {
    const first = await filesOf();
    const manifest = join(dirname(first.files[0]), 'manifest.json');
    const written = readFileSync(manifest, 'utf8');
    expect(await filesOf()).toEqual({ ...first, from: 'cache' });
    expect(readFileSync(manifest, 'utf8')).toBe(written);

    write('lib/counter.ts', `export const next = () => 41;\nexport const here = 'changed';\n`);
    const second = await filesOf();
    expect(second.from).toBe('compiled');
    expect(second.files[0]).not.toBe(first.files[0]);
    const index = await import(pathToFileURL(second.files[0]).href);
    expect(index.here).toBe('changed');
  });

  it('compiles again when the tsconfig of the project changes', async () => {
    const first = await filesOf();
    write('tsconfig.json', JSON.stringify({ compilerOptions: { jsx: 'react-jsx' } }));
    const again = await filesOf();
    expect(again.from).toBe('compiled');
    expect(dirname(again.files[0])).not.toBe(dirname(first.files[0]));
  });

  it('compiles again when an output was removed', async () => {
    const first = await filesOf();
    rmSync(first.files[1]);
    const again = await filesOf();
    expect(again.from).toBe('compiled');
    expect(existsSync(again.files[1])).toBe(true);
  });

  it('compiles an import() of a literal path with attributes into a chunk that loads when called', async () => {
    write('generated/document.json', JSON.stringify({ openapi: '3.1.0', marker: 'lazy-chunk' }));
    write(
      'generated/index.ts',
      `export const document = () => import('./document.json', { with: { type: 'json' } }).then((module) => module.default);\nexport const registry = {};\n`,
    );
    const compiled = await filesOf();
    expect(compiled.from).toBe('compiled');
    // The document is not in the entry's own file: importing the entry does not read it.
    expect(readFileSync(compiled.files[0], 'utf8')).not.toContain('lazy-chunk');
    const index = await import(pathToFileURL(compiled.files[0]).href);
    expect(await index.document()).toEqual({ openapi: '3.1.0', marker: 'lazy-chunk' });
  });

  it('leaves to tsx what a bundle could not keep faithful, and what does not compile, saying why', async () => {
    write('generated/index.ts', `export const load = (name: string) => import(\`../lib/\${name}.js\`);\n`);
    expect(await compiledEntries(project, entries())).toEqual({
      reason: `${join('generated', 'index.ts')} uses import.meta.resolve or an import() of a computed path`,
    });
    write('generated/index.ts', `export const where = import.meta.resolve('yaml');\n`);
    expect(await compiledEntries(project, entries())).toMatchObject({ reason: expect.stringContaining('index.ts') });
    write('generated/index.ts', `export const broken = ;\n`);
    expect(await compiledEntries(project, entries())).toMatchObject({
      reason: expect.stringContaining('the compile failed'),
    });
  });

  it('keeps the cache in the temporary folder only where no other user may write', async () => {
    const bare = mkdtempSync(join(tmpdir(), 'entigen-modules-bare-'));
    const temporary = mkdtempSync(join(tmpdir(), 'entigen-modules-tmp-'));
    made.push(bare, temporary);
    mkdirSync(join(bare, 'generated'));
    writeFileSync(join(bare, 'generated', 'index.ts'), 'export const registry = {};\n');
    delete process.env.ENTIGEN_MODULE_CACHE;
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = temporary;
    try {
      const compiled = await compiledEntries(bare, [join(bare, 'generated', 'index.ts')]);
      expect('files' in compiled && compiled.files[0].startsWith(temporary)).toBe(true);
      const [shared] = readdirSync(temporary);
      expect(statSync(join(temporary, shared)).mode & 0o077).toBe(0);
      // A folder others may write (planted, or loosened) is not run from.
      chmodSync(join(temporary, shared), 0o777);
      expect(await compiledEntries(bare, [join(bare, 'generated', 'index.ts')])).toEqual({
        reason: 'no folder for the cache takes a file (set ENTIGEN_MODULE_CACHE)',
      });
    } finally {
      process.env.TMPDIR = previous;
      if (previous === undefined) delete process.env.TMPDIR;
    }
  });
});
