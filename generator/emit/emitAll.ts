import type { AppModel } from '../../runtime/model/types.js';
import { emitIndex } from './emitIndex.js';
import { emitMetadata } from './emitMetadata.js';
import { emitPackageJson } from './emitPackageJson.js';
import { emitTypes } from './emitTypes.js';
import { emitValidators } from './emitValidators.js';

const EMITTERS = [emitIndex, emitMetadata, emitPackageJson, emitTypes, emitValidators];

/** Every generated file, path relative to the output folder, in path order. */
export function emitAll(model: AppModel): Map<string, string> {
  const files = new Map<string, string>();
  for (const emit of EMITTERS) for (const [path, text] of emit(model)) files.set(path, text);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
