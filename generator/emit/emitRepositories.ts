import type { AppModel, FieldModel } from '../../runtime/model/types.js';
import { typeNamesOf } from '../model/typeNames.js';
import { serverSetType } from './emitTypes.js';
import { newWriter, quote } from './header.js';

const SORTABLE = new Set(['string', 'url', 'enum', 'int', 'float', 'boolean', 'isoDate', 'objectId']);

/** generated/repositories/<plural>.ts: a typed repository per entity, with typed filters and sort keys. */
export function emitRepositories(model: AppModel): Map<string, string> {
  const files = new Map<string, string>();
  for (const entity of model.entities) {
    const names = typeNamesOf(entity);
    // The list language's fields: the declared filters (indexed, text folded) and the id.
    const filterable = entity.fields.filter((f) => (f.filterable || f.name === 'id') && isComparable(f));
    const sortable = entity.fields.filter((f) => !f.hidden && SORTABLE.has(f.type)).map((f) => f.name);
    const enumImports = filterable.map((f) => names.enums.get(f.name)).filter((n): n is string => n !== undefined);
    const writer = newWriter();
    writer.writeLine(
      "import { type FilterValue, Repository, type RepositoryWriter, type Store } from 'entigen/runtime';",
    );
    writer.writeLine(
      `import type { ${[...new Set([names.record, names.create, names.update, ...enumImports])].sort().join(', ')} } from '../types.js';`,
    );
    writer.blankLine();
    writer.writeLine(
      `/** Filters of ${entity.plural}: a value, a list of which any may match, or operators ({ gt: 1 }). */`,
    );
    writer.write(`export interface ${entity.name}Filter`).block(() => {
      for (const field of filterable) {
        writer.writeLine(`${field.name}?: FilterValue<${filterType(field, names.enums.get(field.name))}>;`);
      }
    });
    writer.writeLine(`export type ${entity.name}SortKey = ${sortable.map(quote).join(' | ')};`);
    writer.blankLine();
    writer.writeLine(
      `/** Typed access to ${entity.plural}: no access checks or request validation (read-only fields may be set, checked against their type); hooks and history through a writer. */`,
    );
    writer
      .write(
        `export class ${entity.name}Repository extends Repository<${names.record}, ${names.create}${serverSetType(entity, names.record)}, ${names.update}${serverSetType(entity, names.record)}, ${entity.name}Filter, ${entity.name}SortKey>`,
      )
      .block(() => {
        writer.write('constructor(store: Store, writer?: RepositoryWriter)').block(() => {
          const arrays = entity.fields.filter((f) => f.type === 'array').map((f) => quote(f.name));
          writer.writeLine(
            `super(store, ${quote(entity.plural)}, { owned: ${entity.ownership === 'owned'}, arrayFields: [${arrays.join(', ')}] }, writer);`,
          );
        });
      });
    files.set(`repositories/${entity.plural}.ts`, writer.toString());
  }
  return files;
}

function isComparable(field: FieldModel): boolean {
  const value = field.type === 'array' ? field.items : field;
  return value !== undefined && SORTABLE.has(value.type);
}

function filterType(field: FieldModel, enumName: string | undefined): string {
  const value = field.type === 'array' ? field.items! : field;
  if (enumName) return enumName;
  if (value.type === 'int' || value.type === 'float') return 'number';
  if (value.type === 'boolean') return 'boolean';
  return 'string';
}
