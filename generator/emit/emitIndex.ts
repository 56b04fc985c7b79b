import type { AppModel } from '../../runtime/model/types.js';
import { newWriter } from './header.js';

/** generated/index.ts: registers every entity, its metadata and validators, for the runtime. */
export function emitIndex(model: AppModel): Map<string, string> {
  const writer = newWriter();
  writer.writeLine("import { defineRegistry } from 'entigen/runtime';");
  writer.writeLine("import metadata from './metadata.json' with { type: 'json' };");
  for (const entity of model.entities) {
    writer.writeLine(`import * as ${entity.plural}Validators from './validators/${entity.plural}.js';`);
  }
  writer.blankLine();
  writer.writeLine("export type * from './types.js';");
  writer.blankLine();
  writer.write('export const registry = defineRegistry(metadata, ').inlineBlock(() => {
    for (const entity of model.entities) writer.writeLine(`${entity.plural}: ${entity.plural}Validators,`);
  });
  writer.write(');').newLine();
  return new Map([['index.ts', writer.toString()]]);
}
