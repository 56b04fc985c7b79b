import { parentPort } from 'node:worker_threads';
import type { AppModel } from '../../runtime/model/types.js';
import { emitValidators } from './emitValidators.js';

// Worker half of the validator emission: waits for its share of the model, emits, answers.
parentPort!.once('message', (model: AppModel) => {
  parentPort!.postMessage([...emitValidators(model)]);
});
