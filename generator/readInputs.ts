import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { packageRoot } from '../runtime/model/packageRoot.js';
import type { EntityModel } from '../runtime/model/types.js';

export interface InputFile {
  /** Path shown in messages: relative to the project, or `<entigen>/...` for the package's own files. */
  file: string;
  text: string;
  origin: EntityModel['origin'];
}

export interface Inputs {
  config?: { file: string; text: string };
  entityFiles: InputFile[];
}

export const CONFIG_FILE = 'entigen.config.yaml';
const YAML_FILE = /\.ya?ml$/;

/** Reads the project's config and entity files; built-in and feature entities come from the package. */
export function readInputs(root: string, entitiesDir: string): Inputs {
  const configPath = join(root, CONFIG_FILE);
  const config = existsSync(configPath) ? { file: CONFIG_FILE, text: readFileSync(configPath, 'utf8') } : undefined;
  const appDir = resolve(root, entitiesDir);
  if (!existsSync(appDir)) throw new Error(`entities folder not found: ${relativePath(root, appDir)}`);
  const entityFiles = [
    ...yamlFilesIn(appDir).map((path) => ({
      file: relativePath(root, path),
      text: readFileSync(path, 'utf8'),
      origin: 'app' as const,
    })),
    ...packageEntityFiles('builtin', 'builtin'),
  ];
  return { config, entityFiles };
}

/** The YAML files of one of the package's entity folders (`builtin`, `features/grants`, ...). */
export function packageEntityFiles(folder: string, origin: EntityModel['origin']): InputFile[] {
  const dir = join(packageRoot, 'entities', folder);
  return yamlFilesIn(dir).map((path) => ({
    file: `<entigen>/${relative(packageRoot, path).split(sep).join('/')}`,
    text: readFileSync(path, 'utf8'),
    origin,
  }));
}

export function featureFolders(): string[] {
  const dir = join(packageRoot, 'entities', 'features');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

function yamlFilesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && YAML_FILE.test(entry.name))
    .map((entry) => join(dir, entry.name))
    .sort();
}

function relativePath(root: string, path: string): string {
  return relative(root, path).split(sep).join('/') || '.';
}
