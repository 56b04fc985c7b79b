#!/usr/bin/env node
// npm `prepare`: compiles the TypeScript sources into dist/. With TypeScript installed (a clone
// with its dev dependencies) that is tsc, type-checked and with declarations. Without it (a git
// install with --omit=dev, NODE_ENV=production) esbuild, which tsx brings as a dependency,
// transpiles the same files, so the CLI and the runtime work; only the .d.ts files are missing.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleTypebox } from './bundleTypebox.mjs';
import { compileShapeValidators } from './compileShapeValidators.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const FOLDERS = ['bin', 'generator', 'runtime', 'bench'];

function resolves(name) {
  try {
    return require.resolve(name);
  } catch {
    return undefined;
  }
}

// A clean dist/: files of sources that moved or were deleted must not ship in the package.
rmSync(join(root, 'dist'), { recursive: true, force: true });

const CLI = join(root, 'dist', 'bin', 'entigen.js');
// Compilers write 0644 files; npx and npm run the bin directly, so it must be executable.
const executableCli = () => chmodSync(CLI, 0o755);

// The API reference page's scripts and styles (swagger-ui-dist), compressed once here so that
// /api/docs/assets sends brotli or gzip with no work per request (runtime/http/docsRoutes.ts).
const precompressReferenceAssets = async () => {
  const source = dirname(require.resolve('swagger-ui-dist/package.json'));
  const target = join(root, 'dist', 'static', 'swagger-ui');
  mkdirSync(target, { recursive: true });
  for (const name of ['swagger-ui-bundle.js', 'swagger-ui.css']) copyFileSync(join(source, name), join(target, name));
  const { precompress } = await import('./precompress.mjs');
  precompress(target);
};

const tsc = resolves('typescript/bin/tsc');
if (tsc) {
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (result.status === 0) {
    executableCli();
    await precompressReferenceAssets();
    await bundleTypebox();
    await compileShapeValidators();
  }
  process.exit(result.status ?? 1);
}

const esbuildPath = resolves('esbuild');
if (!esbuildPath) {
  process.stderr.write(
    'entigen prepare: neither typescript nor esbuild is installed, so dist/ cannot be built; run npm install with dev dependencies\n',
  );
  process.exit(1);
}
const { build } = await import(esbuildPath);
const sources = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) sources.push(path);
  }
};
for (const folder of FOLDERS) walk(join(root, folder));
await build({
  entryPoints: sources,
  outdir: join(root, 'dist'),
  outbase: root,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});
executableCli();
await precompressReferenceAssets();
await bundleTypebox();
await compileShapeValidators();
process.stdout.write(
  `entigen prepare: typescript is not installed; transpiled ${sources.length} files with esbuild into ${relative(process.cwd(), join(root, 'dist')) || 'dist'}/ (no type declarations)\n`,
);
