import { serverSetFields, writableFields } from '../../runtime/model/entityRoutes.js';
import type { AppModel, EntityModel, FieldModel, ValueModel } from '../../runtime/model/types.js';
import { typeNamesOf } from '../model/typeNames.js';
import { newWriter, quote } from './header.js';

/** generated/types.ts: per entity a record interface, create and update inputs, and enum unions. */
export function emitTypes(model: AppModel): Map<string, string> {
  const writer = newWriter();
  if (model.locales) {
    writer.writeLine('/** The locales of `locales:` in entigen.config.yaml. */');
    writer.writeLine(`export type Locale = ${model.locales.available.map(quote).join(' | ')};`);
    writer.writeLine("/** A localized field's values, keyed by locale. */");
    writer.writeLine('export type Localized<T> = { [L in Locale]?: T };');
  }
  for (const entity of model.entities) {
    const names = typeNamesOf(entity);
    writer.blankLine();
    writer.writeLine(`// ${entity.label} (/${entity.plural})`);
    for (const field of entity.fields) {
      const enumName = names.enums.get(field.name);
      const values = field.type === 'enum' ? field.values : field.items?.values;
      if (enumName && values)
        writer.writeLine(`export type ${enumName} = ${values.map((v) => quote(v.key)).join(' | ')};`);
    }
    const typeOf = (field: FieldModel) => {
      const one = tsType(field, names.enums.get(field.name));
      // A localized field: one locale's value, or (locale *, or a write of several) one per locale.
      const type = field.localized ? `${one} | Localized<${one}${field.required ? '' : ' | null'}>` : one;
      return type + (field.required || field.type === 'any' ? '' : ' | null');
    };
    const documented = (field: FieldModel, line: string) => {
      const limits = constraintTags(field);
      if (limits) writer.writeLine(`/** ${limits} */`);
      writer.writeLine(line);
    };
    writer.write(`export interface ${names.record}`).block(() => {
      for (const field of entity.fields.filter((f) => !f.hidden)) {
        documented(field, `${field.name}: ${typeOf(field)};`);
      }
      const localized = entity.fields.filter((f) => f.localized);
      if (localized.length > 0) {
        writer.writeLine('/** The locale each localized value came from (absent with locale *). */');
        writer.writeLine(`_locales?: { ${localized.map((f) => `${f.name}?: Locale`).join('; ')} };`);
      }
      for (const relation of entity.relations ?? []) {
        const related = model.entities.find((e) => e.plural === relation.entity)!;
        writer.writeLine(
          `/** ${relation.label}: present with populate=${relation.name} (at most 100, newest first). */`,
        );
        writer.writeLine(`${relation.name}?: { items: ${typeNamesOf(related).record}[]; totalCount: number };`);
      }
    });
    const writable = writableFields(entity);
    writer.write(`export interface ${names.create}`).block(() => {
      for (const field of writable) {
        const required = field.required && field.default === undefined;
        documented(field, `${field.name}${required ? '' : '?'}: ${typeOf(field)};`);
      }
    });
    writer.write(`export interface ${names.update}`).block(() => {
      for (const field of writable) documented(field, `${field.name}?: ${typeOf(field)};`);
    });
  }
  writer.blankLine();
  writer.writeLine('/** Every entity by plural, with its record, create and update types. */');
  writer.write('export interface Entities').block(() => {
    for (const entity of model.entities) {
      const names = typeNamesOf(entity);
      writer.writeLine(
        `${entity.plural}: { record: ${names.record}; create: ${names.create}; update: ${names.update} };`,
      );
    }
  });
  return new Map([['types.ts', writer.toString()]]);
}

/** A field's declared constraints as JSDoc tags (`@minimum 1 @maxLength 40`), or '' when it has none. */
function constraintTags(field: FieldModel): string {
  const tags: [string, unknown][] = [
    ['minimum', field.min],
    ['maximum', field.max],
    ['minLength', field.minLength],
    ['maxLength', field.maxLength],
    ['pattern', field.pattern],
    ['format', field.format],
    ['minItems', field.minItems],
    ['maxItems', field.maxItems],
  ];
  const items: [string, unknown][] = field.items
    ? [
        ['items.minimum', field.items.min],
        ['items.maximum', field.items.max],
        ['items.minLength', field.items.minLength],
        ['items.maxLength', field.items.maxLength],
        ['items.pattern', field.items.pattern],
        ['items.format', field.items.format],
      ]
    : [];
  return [...tags, ...items]
    .filter(([, value]) => value !== undefined)
    .map(([tag, value]) => `@${tag} ${String(value).replace(/\*\//g, '*\\/')}`)
    .join(' ');
}

/**
 * ` & Partial<Pick<Record, 'a' | 'b'>>`: the read-only fields server code may set (a before-hook's
 * answer, a repository's write), or nothing.
 */
export function serverSetType(entity: EntityModel, record: string): string {
  const names = serverSetFields(entity).map((f) => `'${f.name}'`);
  return names.length > 0 ? ` & Partial<Pick<${record}, ${names.join(' | ')}>>` : '';
}

export function tsType(value: ValueModel, enumName?: string): string {
  switch (value.type) {
    case 'string':
    case 'objectId':
    case 'isoDate':
    case 'url':
    case 'encryptedKey':
      return 'string';
    case 'int':
    case 'float':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'enum':
      return enumName ?? (value.values ?? []).map((v) => quote(v.key)).join(' | ');
    case 'array': {
      const inner = tsType(value.items ?? { type: 'any' }, enumName);
      return /[ |]/.test(inner) ? `Array<${inner}>` : `${inner}[]`;
    }
    case 'object':
      if (!value.properties) return 'Record<string, unknown>';
      return `{ ${value.properties.map((p) => `${p.name}${p.required ? '' : '?'}: ${tsType(p)}${p.required || p.type === 'any' ? '' : ' | null'}`).join('; ')} }`;
    case 'any':
      return 'unknown';
  }
}
