#!/usr/bin/env node
// After the compile: dist/generator/schema/shapeValidators.cjs holds the validators of the entity
// and config files as AJV standalone code, which every build would otherwise compile from the
// schemas (some 100 ms of the build's thread). checkShape uses it only while it matches the
// schemas, AJV's options and version it was made from; otherwise it compiles them itself.
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const module = join(root, 'dist', 'generator', 'schema', 'checkShape.js');

export async function compileShapeValidators() {
  if (!existsSync(module)) return;
  const { SHAPE_VALIDATORS_FILE, shapeValidatorsModule } = await import(pathToFileURL(module).href);
  writeFileSync(join(dirname(module), SHAPE_VALIDATORS_FILE), shapeValidatorsModule());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await compileShapeValidators();
