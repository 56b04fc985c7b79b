import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { parse } from 'yaml';
import { packageRoot } from '../runtime/model/packageRoot.js';
import type { EntityModel } from '../runtime/model/types.js';
import type { ValidatorCache } from './emit/validatorCache.js';
import type { ParsedYamlCache } from './schema/parsedYamlCache.js';

export interface InputFile {
  /** Path shown in messages: relative to the project, or `<entigen>/...` for the package's own files. */
  file: string;
  text: string;
  origin: EntityModel['origin'];
}

/** A hook module of the project: `<hooks.dir>/<plural>.ts`. */
export interface HookFile {
  /** Path relative to the project, as messages show it. */
  file: string;
  text: string;
  /** The file's name without `.ts`: the entity it must be for. */
  plural: string;
}

export interface Inputs {
  config?: { file: string; text: string };
  /** The module `jobs.handlers` names, when the config names one: its text, or null when it does not exist. */
  jobHandlers?: { file: string; text: string | null };
  entityFiles: InputFile[];
  /** The project's hook modules, in name order; absent when it has none. */
  hookFiles?: HookFile[];
  /** What the files' texts read into in earlier builds (the CLI's build, check and dev keep it). */
  parsedYaml?: ParsedYamlCache;
  /** The validators compiled in earlier builds, by what they were compiled from (likewise). */
  validators?: ValidatorCache;
}

/** Where hook modules are looked for when the config names no `hooks.dir`. */
export const DEFAULT_HOOKS_DIR = 'hooks';

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
  const hooksDir = hooksDirOf(config?.text);
  const hookFiles = hookFilesIn(root, hooksDir);
  const handlers = jobHandlersOf(config?.text);
  const jobHandlers = handlers
    ? {
        file: handlers,
        text: existsSync(resolve(root, handlers)) ? readFileSync(resolve(root, handlers), 'utf8') : null,
      }
    : undefined;
  return {
    config,
    entityFiles,
    ...(hookFiles.length > 0 ? { hookFiles } : {}),
    ...(jobHandlers ? { jobHandlers } : {}),
  };
}

/** `hooks.dir` of the config text, or the default; a config too broken to read gets the default (its own errors follow). */
export function hooksDirOf(configText: string | undefined): string {
  try {
    const dir = (parse(configText ?? '') as { hooks?: { dir?: unknown } } | null)?.hooks?.dir;
    return typeof dir === 'string' && dir !== '' ? dir : DEFAULT_HOOKS_DIR;
  } catch {
    return DEFAULT_HOOKS_DIR;
  }
}

/** `jobs.handlers` of the config text, if it names one. */
export function jobHandlersOf(configText: string | undefined): string | undefined {
  try {
    const path = (parse(configText ?? '') as { jobs?: { handlers?: unknown } } | null)?.jobs?.handlers;
    return typeof path === 'string' && path !== '' ? path : undefined;
  } catch {
    return undefined;
  }
}

const HOOK_FILE = /^[A-Za-z][A-Za-z0-9]*\.(ts|mts)$/;

function hookFilesIn(root: string, hooksDir: string): HookFile[] {
  const dir = resolve(root, hooksDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && HOOK_FILE.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => entry.name)
    .sort()
    .map((name) => ({
      file: relativePath(root, join(dir, name)),
      text: readFileSync(join(dir, name), 'utf8'),
      plural: name.replace(/\.m?ts$/, ''),
    }));
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
