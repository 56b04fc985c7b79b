import type { AppModel } from '../../runtime/model/types.js';
import { newWriter } from './header.js';

/** generated/index.ts: registers every entity (metadata, validators, routes) and builds the repositories. */
export function emitIndex(model: AppModel): Map<string, string> {
  const writer = newWriter();
  writer.writeLine("import { defineRegistry, type Store } from 'entigen/runtime';");
  writer.writeLine("import metadata from './metadata.json' with { type: 'json' };");
  writer.writeLine("import openapi from './openapi.json' with { type: 'json' };");
  for (const entity of model.entities) {
    writer.writeLine(`import { ${entity.name}Repository } from './repositories/${entity.plural}.js';`);
    writer.writeLine(`import { ${entity.plural}Routes } from './routers/${entity.plural}.js';`);
  }
  writer.blankLine();
  writer.writeLine("export type * from './types.js';");
  for (const entity of model.entities)
    writer.writeLine(`export { ${entity.name}Repository } from './repositories/${entity.plural}.js';`);
  writer.blankLine();
  writer.write('export const registry = defineRegistry(metadata, ').inlineBlock(() => {
    for (const entity of model.entities) writer.writeLine(`${entity.plural}: ${entity.plural}Routes,`);
  });
  writer.write(', { openapi });').newLine();
  writer.blankLine();
  writer.writeLine('/** Typed repositories over a store, for application code and job handlers. */');
  writer.write('export function repositories(store: Store)').block(() => {
    writer.write('return').inlineBlock(() => {
      for (const entity of model.entities) writer.writeLine(`${entity.plural}: new ${entity.name}Repository(store),`);
    });
    writer.write(';').newLine();
  });
  writer.blankLine();
  writer.writeLine('export type Repositories = ReturnType<typeof repositories>;');
  return new Map([['index.ts', writer.toString()]]);
}
