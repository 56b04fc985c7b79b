import type { AppModel } from '../../runtime/model/types.js';
import { newWriter } from './header.js';

/** A project hook module and its import path from the output folder. */
export interface HookModuleImport {
  plural: string;
  path: string;
}

/** What emitters need beyond the model: which hook modules exist (their contents never matter). */
export interface EmitExtras {
  hookModules: readonly HookModuleImport[];
}

/** generated/index.ts: registers every entity (metadata, validators, routes, hooks) and builds the repositories. */
export function emitIndex(model: AppModel, extras: EmitExtras = { hookModules: [] }): Map<string, string> {
  const writer = newWriter();
  writer.writeLine("import { defineRegistry, type RepositoryWriter, type Store } from 'entigen/runtime';");
  for (const hook of extras.hookModules) writer.writeLine(`import ${hook.plural}Hooks from '${hook.path}';`);
  writer.writeLine("import metadata from './metadata.json' with { type: 'json' };");
  for (const entity of model.entities) {
    writer.writeLine(`import { ${entity.name}Repository } from './repositories/${entity.plural}.js';`);
    writer.writeLine(`import { ${entity.plural}Routes } from './routers/${entity.plural}.js';`);
  }
  writer.blankLine();
  writer.writeLine('// The OpenAPI document loads when it is first asked for, not with the server.');
  writer.writeLine(
    "const openapi = () => import('./openapi.json', { with: { type: 'json' } }).then((module) => module.default);",
  );
  writer.blankLine();
  writer.writeLine("export type * from './types.js';");
  for (const entity of model.entities)
    writer.writeLine(`export { ${entity.name}Repository } from './repositories/${entity.plural}.js';`);
  writer.blankLine();
  writer.write('export const registry = defineRegistry(metadata, ').inlineBlock(() => {
    for (const entity of model.entities) writer.writeLine(`${entity.plural}: ${entity.plural}Routes,`);
  });
  const hooks = extras.hookModules.map((hook) => `${hook.plural}Hooks`);
  writer.write(`, { openapi${hooks.length > 0 ? `, hooks: [${hooks.join(', ')}]` : ''} });`).newLine();
  writer.blankLine();
  writer.writeLine('/**');
  writer.writeLine(' * Typed repositories over a store, for application code, hooks and job handlers. With a writer');
  writer.writeLine(" * (the runtime's), writes run the entity's hooks, history and event log; without one, they go");
  writer.writeLine(' * straight to the store.');
  writer.writeLine(' */');
  writer.write('export function repositories(store: Store, writer?: RepositoryWriter)').block(() => {
    writer.write('return').inlineBlock(() => {
      for (const entity of model.entities)
        writer.writeLine(`${entity.plural}: new ${entity.name}Repository(store, writer),`);
    });
    writer.write(';').newLine();
  });
  writer.blankLine();
  writer.writeLine('export type Repositories = ReturnType<typeof repositories>;');
  return new Map([['index.ts', writer.toString()]]);
}
