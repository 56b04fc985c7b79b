import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AppModel, EntityModel } from '../../runtime/model/types.js';
import type { OutputWriter } from '../writeOutput.js';
import { entityValidators, validatorPaths, validatorSchemas } from './emitValidators.js';
import { type ValidatorCache, validatorCacheKey } from './validatorCache.js';
import type { ValidatorAnswer, ValidatorRequest } from './validatorsWorker.js';

/** Below this many entity files a worker costs more to start than it saves. */
export const PARALLEL_THRESHOLD = 60;
const workerFile = fileURLToPath(new URL('./validatorsWorker.js', import.meta.url));

/** A worker thread started early, so that it boots while the main thread builds the model. */
export interface ValidatorHelper {
  emit(request: ValidatorRequest): Promise<ValidatorAnswer>;
  /** Ends the thread (after emit, or when the build stops before it). */
  stop(): void;
}

export function startValidatorHelper(entityFiles: number): ValidatorHelper | undefined {
  // From the TypeScript sources (tests) there is no compiled worker file: everything runs here.
  if (entityFiles < PARALLEL_THRESHOLD || availableParallelism() < 2 || !existsSync(workerFile)) return undefined;
  // A young generation of 24 MB: the thread's garbage is short-lived code text. At 8 MB its
  // collections took a tenth of the thread's time and AJV ran some 6% slower an entity;
  // V8's default (sized for servers) holds about 20 MB more at the build's peak for no more speed.
  const worker = new Worker(workerFile, { resourceLimits: { maxYoungGenerationSizeMb: 24 } });
  worker.unref();
  return {
    emit(request) {
      const answer = new Promise<ValidatorAnswer>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      worker.postMessage(request);
      return answer;
    },
    stop: () => void worker.terminate(),
  };
}

/**
 * Same output as emitValidators, with `meanwhile` run on this thread while the helper works.
 * AJV code generation is the largest part of a large build and each entity's validators stand
 * alone, so the threads share them: each takes the next entity from a counter they share, the
 * helper from the start and this thread once `meanwhile` is done, so neither waits for the other
 * however the two parts compare on the machine at hand. With a writer, each thread writes its own.
 * With a cache, only the entities whose schemas it does not hold are compiled, and the helper
 * writes the files of the others.
 */
export async function emitValidatorsInParallel(
  model: AppModel,
  helper: ValidatorHelper | undefined,
  meanwhile: () => void = () => undefined,
  writer?: OutputWriter,
  cache?: ValidatorCache,
): Promise<Map<string, string>> {
  const { kept, pending, keys } = fromCache(model.entities, cache);
  const next = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const theirs = helper?.emit({
    model: { ...model, entities: pending },
    next: next.buffer as SharedArrayBuffer,
    target: writer?.target,
    alsoWrite: writer ? kept : [],
  });
  meanwhile();
  const mine = new Map<string, string>();
  for (let index = Atomics.add(next, 0, 1); index < pending.length; index = Atomics.add(next, 0, 1))
    for (const [path, text] of entityValidators(pending[index])) mine.set(path, text);
  writer?.write(mine);
  if (!theirs) writer?.write(new Map(kept));
  const answer = await theirs;
  if (answer)
    writer?.adopt(
      [...answer.files, ...kept].map(([path]) => path),
      answer.written,
    );
  const files = new Map([...kept, ...(answer?.files ?? []), ...mine]);
  if (cache)
    for (const entity of pending) cache.set(keys.get(entity.plural) ?? keyOf(entity), keptFiles(files, entity.plural));
  return files;
}

const keyOf = (entity: EntityModel) => validatorCacheKey(entity.plural, validatorSchemas(entity));

/**
 * The files the cache holds for each entity, the entities it does not, and the key of each of
 * those. An empty cache (a first build) is not asked: the keys are worked out once the helper is
 * busy, not before it starts.
 */
function fromCache(entities: EntityModel[], cache: ValidatorCache | undefined) {
  const kept: [string, string][] = [];
  const keys = new Map<string, string>();
  if (!cache || cache.size === 0) return { kept, pending: entities, keys };
  const pending: EntityModel[] = [];
  for (const entity of entities) {
    const key = keyOf(entity);
    const files = cache.get(key);
    if (files) kept.push(...files);
    else {
      pending.push(entity);
      keys.set(entity.plural, key);
    }
  }
  return { kept, pending, keys };
}

function keptFiles(files: ReadonlyMap<string, string>, plural: string): [string, string][] {
  return validatorPaths(plural).map((path) => [path, files.get(path) ?? '']);
}
