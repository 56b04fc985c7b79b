import { parentPort } from 'node:worker_threads';
import type { AppModel } from '../../runtime/model/types.js';
import { type OutputTarget, writeChanged } from '../writeOutput.js';
import { emitValidators } from './emitValidators.js';

export interface ValidatorRequest {
  model: AppModel;
  /** Where to write the files too, when the build writes. */
  target?: OutputTarget;
  /** Files made before (kept by the cache) to write to the target as well. */
  alsoWrite?: [string, string][];
}

export interface ValidatorAnswer {
  files: [string, string][];
  /** The paths written to the target (of both the files emitted and those to write as well). */
  written: string[];
}

// Helper thread of the validator emission: waits for its share of the model, emits (and
// writes, when asked, with the files kept from before), answers.
parentPort?.once('message', ({ model, target, alsoWrite = [] }: ValidatorRequest) => {
  const files = [...emitValidators(model)];
  const written = target ? [...writeChanged(target, alsoWrite), ...writeChanged(target, files)] : [];
  const answer: ValidatorAnswer = { files, written };
  parentPort!.postMessage(answer);
});
