import { parentPort } from 'node:worker_threads';
import type { AppModel } from '../../runtime/model/types.js';
import { type OutputTarget, writeChanged } from '../writeOutput.js';
import { entityValidators } from './emitValidators.js';

export interface ValidatorRequest {
  model: AppModel;
  /** The index of the next entity to emit, shared with the build's thread, which takes entities too. */
  next: SharedArrayBuffer;
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

// Helper thread of the validator emission: waits for the model, writes the files kept from before
// when asked, emits (and writes) the validators of each entity it takes from the counter it shares
// with the build's thread, answers.
parentPort?.once('message', ({ model, next, target, alsoWrite = [] }: ValidatorRequest) => {
  const counter = new Int32Array(next);
  const written = target ? writeChanged(target, alsoWrite) : [];
  const files: [string, string][] = [];
  for (let index = Atomics.add(counter, 0, 1); index < model.entities.length; index = Atomics.add(counter, 0, 1)) {
    const made = entityValidators(model.entities[index]);
    // Written as each is made: the build's thread, done with its own, waits for one entity's files at most.
    if (target) written.push(...writeChanged(target, made));
    files.push(...made);
  }
  const answer: ValidatorAnswer = { files, written };
  parentPort!.postMessage(answer);
});
