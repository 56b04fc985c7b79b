import { parentPort } from 'node:worker_threads';
import type { AppModel } from '../../runtime/model/types.js';
import { type OutputTarget, writeChanged } from '../writeOutput.js';
import { emitValidators } from './emitValidators.js';

export interface ValidatorRequest {
  model: AppModel;
  /** Where to write the files too, when the build writes. */
  target?: OutputTarget;
}

export interface ValidatorAnswer {
  files: [string, string][];
  /** The paths written to the target. */
  written: string[];
}

// Helper thread of the validator emission: waits for its share of the model, emits (and
// writes, when asked), answers.
parentPort?.once('message', ({ model, target }: ValidatorRequest) => {
  const files = [...emitValidators(model)];
  const answer: ValidatorAnswer = { files, written: target ? writeChanged(target, files) : [] };
  parentPort!.postMessage(answer);
});
