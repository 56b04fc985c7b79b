import type { AppModel } from '../../runtime/model/types.js';
import { emitClient } from './emitClient.js';
import { emitHooks } from './emitHooks.js';
import { type EmitExtras, emitIndex } from './emitIndex.js';
import { emitMetadata } from './emitMetadata.js';
import { emitPackageJson } from './emitPackageJson.js';
import { emitRepositories } from './emitRepositories.js';
import { emitRouters } from './emitRouters.js';
import { emitTypes } from './emitTypes.js';
import { emitValidatorsInParallel, type ValidatorHelper } from './emitValidatorsInParallel.js';
import { emitOpenApi } from './openapi/emitOpenApi.js';

const EMITTERS = [
  emitClient,
  emitHooks,
  emitIndex,
  emitMetadata,
  emitOpenApi,
  emitPackageJson,
  emitRepositories,
  emitRouters,
  emitTypes,
];

/** Every generated file, path relative to the output folder, in path order. */
export async function emitAll(
  model: AppModel,
  helper?: ValidatorHelper,
  extras: EmitExtras = { hookModules: [] },
): Promise<Map<string, string>> {
  const validators = emitValidatorsInParallel(model, helper);
  const files = new Map<string, string>();
  for (const emit of EMITTERS) for (const [path, text] of emit(model, extras)) files.set(path, text);
  for (const [path, text] of await validators) files.set(path, text);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
