#!/usr/bin/env node
// After the compile: dist/runtime/api/typebox.js re-exports TypeBox's type builder from the
// package, some 200 ES modules that take over 100 ms of every start to load. esbuild bundles
// what it uses into that one file instead (same export, some 15 ms). Without esbuild the
// compiled re-export stays: slower to load, alike otherwise.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const file = join(root, 'dist', 'runtime', 'api', 'typebox.js');

export async function bundleTypebox() {
  if (!existsSync(file)) return;
  let esbuild;
  try {
    esbuild = await import(createRequire(join(root, 'package.json')).resolve('esbuild'));
  } catch {
    return;
  }
  const result = await esbuild.build({
    entryPoints: [file],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    legalComments: 'inline',
    logLevel: 'warning',
  });
  writeFileSync(file, result.outputFiles[0].text);
  // The compiler's source map described the re-export, not the bundle.
  rmSync(`${file}.map`, { force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleTypebox();
