import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AppModel } from '../../runtime/model/types.js';
import { emitValidators } from './emitValidators.js';

/** Below this many entity files a worker costs more to start than it saves. */
export const PARALLEL_THRESHOLD = 60;
const workerFile = fileURLToPath(new URL('./validatorsWorker.js', import.meta.url));

/** A worker thread started early, so that it boots while the main thread builds the model. */
export interface ValidatorHelper {
  emit(model: AppModel): Promise<[string, string][]>;
}

export function startValidatorHelper(entityFiles: number): ValidatorHelper | undefined {
  // From the TypeScript sources (tests) there is no compiled worker file: everything runs here.
  if (entityFiles < PARALLEL_THRESHOLD || availableParallelism() < 2 || !existsSync(workerFile)) return undefined;
  const worker = new Worker(workerFile);
  worker.unref();
  return {
    emit(model) {
      const answer = new Promise<[string, string][]>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      worker.postMessage(model);
      return answer.finally(() => worker.terminate());
    },
  };
}

/**
 * Same output as emitValidators. AJV code generation is most of a large build and each
 * entity's validators stand alone, so the helper thread takes part of the entities.
 */
export async function emitValidatorsInParallel(
  model: AppModel,
  helper?: ValidatorHelper,
): Promise<Map<string, string>> {
  if (!helper) return emitValidators(model);
  const split = Math.ceil(model.entities.length * 0.5);
  const theirs = helper.emit({ ...model, entities: model.entities.slice(split) });
  const mine = emitValidators({ ...model, entities: model.entities.slice(0, split) });
  return new Map([...mine, ...(await theirs)]);
}
