import type { AppModel } from '../../runtime/model/types.js';
import type { OutputWriter } from '../writeOutput.js';
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
import type { ValidatorCache } from './validatorCache.js';

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

/**
 * Every generated file, path relative to the output folder, in path order; with a writer, each
 * is also written as soon as it is made (the caller finishes the writer). With a validator cache,
 * only the validators of entities whose schemas it does not hold are compiled.
 */
export async function emitAll(
  model: AppModel,
  helper?: ValidatorHelper,
  extras: EmitExtras = { hookModules: [] },
  writer?: OutputWriter,
  validatorCache?: ValidatorCache,
): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const emitOthers = () => {
    for (const emit of EMITTERS) for (const [path, text] of emit(model, extras)) files.set(path, text);
    writer?.write(files);
  };
  const validators = await emitValidatorsInParallel(model, helper, emitOthers, writer, validatorCache);
  for (const [path, text] of validators) files.set(path, text);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
