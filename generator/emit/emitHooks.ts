import type { AppModel } from '../../runtime/model/types.js';
import { typeNamesOf } from '../model/typeNames.js';
import { serverSetType, tsType } from './emitTypes.js';
import { newWriter } from './header.js';

/**
 * generated/hooks.ts: `defineHooks(plural, hooks)`, typed per entity from its record, create and
 * update types, and `reject` for refusals. Hook modules (hooks/<plural>.ts) import both from here.
 */
export function emitHooks(model: AppModel): Map<string, string> {
  const entities = model.entities.filter((e) => !e.internal);
  const writer = newWriter();
  const withEndpoints = entities.filter((e) => (e.endpoints ?? []).length > 0);
  writer.writeLine(
    `import type { ${withEndpoints.length > 0 ? 'Caller, ' : ''}EntityHooks, HookModule${withEndpoints.length > 0 ? ', PresentRecord' : ''} } from 'entigen/runtime';`,
  );
  writer.writeLine("import type { Repositories } from './index.js';");
  const types = entities.flatMap((entity) => {
    const names = typeNamesOf(entity);
    return [names.record, names.create, names.update];
  });
  writer.writeLine(`import type { ${[...new Set(types)].sort().join(', ')} } from './types.js';`);
  writer.blankLine();
  writer.writeLine("export { reject } from 'entigen/runtime';");
  writer.writeLine(
    "export type { AfterCommitArgs, ChangeEventName, HookContext, WriteOperation } from 'entigen/runtime';",
  );
  writer.blankLine();
  writer.writeLine('/** The hooks each entity may have, typed from its generated record, create and update types. */');
  writer.write('export interface HookTypes').block(() => {
    for (const entity of entities) {
      const names = typeNamesOf(entity);
      const endpoints = (entity.endpoints ?? []).length > 0 ? ` & { endpoints: ${entity.name}Endpoints }` : '';
      const serverSet = serverSetType(entity, names.record);
      writer.writeLine(
        `${entity.plural}: EntityHooks<${names.record}, ${names.create}${serverSet}, ${names.update}${serverSet}, Repositories>${endpoints};`,
      );
    }
  });
  for (const entity of withEndpoints) {
    const record = typeNamesOf(entity).record;
    writer.blankLine();
    writer.writeLine(`/** Handlers of the custom endpoints of ${entity.plural}, as its entity file declares them. */`);
    writer.write(`export interface ${entity.name}Endpoints`).block(() => {
      for (const endpoint of entity.endpoints ?? []) {
        const fields = (endpoint.body ?? []).map(
          (f) =>
            `${f.name}${f.required && f.default === undefined ? '' : '?'}: ${tsType(f)}${f.required || f.type === 'any' ? '' : ' | null'}`,
        );
        const body = ['POST', 'PUT', 'PATCH'].includes(endpoint.method)
          ? fields.length > 0
            ? `{ ${fields.join('; ')} }`
            : 'Record<string, never>'
          : 'undefined';
        const target = endpoint.byId ? `id: string; record: ${record}; ` : '';
        const answer = endpoint.response === 'record' ? `${record} | undefined` : 'unknown';
        const needs = `${entity.plural}:${endpoint.action}`;
        writer.writeLine(`/** ${endpoint.method} /api/v1/${entity.plural}${endpoint.path}; needs ${needs} */`);
        writer.writeLine(
          `${endpoint.name}(args: { ${target}body: ${body}; caller: Caller; now: Date; repositories: Repositories; present: PresentRecord }): ${answer} | Promise<${answer}>;`,
        );
      }
    });
  }
  writer.blankLine();
  writer.writeLine(
    "/** A hook module's default export: `export default defineHooks('orders', { beforeCreate() { ... } })`. */",
  );
  // NoInfer: the entity comes from the first argument alone, so the hooks object (and the data
  // each hook returns, unknown fields included) is checked against that entity's types exactly.
  writer
    .write(
      'export function defineHooks<P extends keyof HookTypes>(plural: P, hooks: NoInfer<HookTypes[P]>): HookModule',
    )
    .block(() => {
      writer.writeLine("return { plural, hooks: hooks as HookModule['hooks'] };");
    });
  return new Map([['hooks.ts', writer.toString()]]);
}
