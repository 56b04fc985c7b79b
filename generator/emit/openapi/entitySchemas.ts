import { ACCUMULATORS, groupableFields, measurableFields } from '../../../runtime/model/aggregateFields.js';
import { MAX_FILTER_VALUES, OPERATOR_MEANINGS, operatorsFor } from '../../../runtime/model/filterOperators.js';
import type { EntityModel, FieldModel, ValueModel } from '../../../runtime/model/types.js';
import { type JsonSchema, valueSchema } from '../../../runtime/model/valueSchema.js';
import { bodySchemas } from '../emitValidators.js';
import { ref } from './components.js';

// Each entity's schemas and filter parameters: the components its route declarations refer to
// (runtime/api/entityRoutes.ts).

/** A record as the server answers it: every visible field, unset ones null, references possibly populated. */
function recordSchema(entity: EntityModel, relatedEntities: ReadonlyMap<string, EntityModel>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const field of entity.fields.filter((f) => !f.hidden)) {
    properties[field.name] = field.localized
      ? localizedValue(field)
      : responseValue(field, !field.required || !field.system);
    if (field.access) properties[field.name] = withAccess(properties[field.name], field);
  }
  if (entity.fields.some((f) => f.localized))
    properties._locales = {
      type: 'object',
      description: 'The locale each localized value came from (absent with locale=*)',
      additionalProperties: { type: 'string' },
    };
  // populate=<relation>: the newest referencing records the caller may see, and how many there are.
  for (const relation of entity.relations ?? []) {
    const related = relatedEntities.get(relation.entity);
    if (!related) continue;
    properties[relation.name] = {
      type: 'object',
      description: `${relation.label} (only with populate=${relation.name}): at most 100, newest first`,
      required: ['items', 'totalCount'],
      properties: { items: { type: 'array', items: ref(related.name) }, totalCount: { type: 'integer' } },
    };
  }
  return { type: 'object', description: entity.description ?? entity.label, properties, required: ['id'] };
}

/** A field under `access:`: absent from the answers of callers who may not see it, and who may. */
function withAccess(schema: JsonSchema, field: FieldModel): JsonSchema {
  const roles = (list: string[]) => (list.length > 0 ? list.join(', ') : 'no role');
  const rule = `Under access rules (ADMIN always may; owner: the record's owner): present only for ${roles(field.access!.view)}, set only by ${roles(field.access!.edit)}.`;
  return {
    ...schema,
    description: schema.description ? `${schema.description}. ${rule}` : rule,
    'x-entigen-access': { view: field.access!.view, edit: field.access!.edit },
  };
}

/** A body schema whose localized fields also take a plain value: the request's locale's (?locale, else the default). */
function withPlainLocales(entity: EntityModel, body: JsonSchema): JsonSchema {
  const localized = entity.fields.filter((f) => f.localized);
  if (localized.length === 0) return body;
  const properties = { ...(body.properties as Record<string, JsonSchema>) };
  for (const field of localized) properties[field.name] = { anyOf: [valueSchema(field), properties[field.name]] };
  return { ...body, properties };
}

/** A localized field: one locale's value (null when no locale of the chain has one), or with locale=* every locale's. */
function localizedValue(field: FieldModel): JsonSchema {
  const value = responseValue(field, false);
  return {
    anyOf: [
      value,
      { type: 'null' },
      {
        type: 'object',
        description: 'Every locale that has a value (locale=*)',
        properties: Object.fromEntries(field.localized!.locales.map((locale) => [locale, value])),
        additionalProperties: false,
      },
    ],
  };
}

function responseValue(value: ValueModel, nullable: boolean): JsonSchema {
  let schema: JsonSchema;
  if (value.type === 'objectId') {
    // `populate` replaces the id by the referenced record (or `{ id }` when it is not viewable).
    schema = {
      anyOf: [{ type: 'string' }, { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }],
    };
  } else if (value.type === 'array') {
    schema = { type: 'array', items: responseValue(value.items ?? { type: 'any' }, false) };
  } else if (value.type === 'object') {
    schema = { type: 'object' };
  } else if (value.type === 'isoDate' || value.type === 'url' || value.type === 'encryptedKey') {
    schema = { type: 'string' };
  } else {
    schema = valueSchema(value);
  }
  if (!nullable || value.type === 'any') return schema;
  return { anyOf: [schema, { type: 'null' }] };
}

function aggregateGroupSchema(entity: EntityModel): JsonSchema {
  const keys: Record<string, JsonSchema> = {};
  for (const field of groupableFields(entity))
    keys[field.name] = field.type === 'isoDate' ? { type: ['string', 'null'] } : responseValue(field, true);
  const properties: Record<string, JsonSchema> = {
    key: {
      type: 'object',
      description: 'The group: each groupBy field and its value (dates: the bucket start, YYYY-MM-DD)',
      properties: keys,
    },
    count: { type: 'integer' },
  };
  for (const op of ACCUMULATORS) {
    const values: Record<string, JsonSchema> = {};
    for (const field of measurableFields(entity, op))
      values[field.name] = { type: field.type === 'isoDate' ? ['string', 'null'] : ['number', 'null'] };
    if (Object.keys(values).length > 0) properties[op] = { type: 'object', properties: values };
  }
  return { type: 'object', required: ['key', 'count'], properties };
}

export function entitySchemas(
  entity: EntityModel,
  relatedEntities: ReadonlyMap<string, EntityModel>,
): Record<string, JsonSchema> {
  const bodies = bodySchemas(entity);
  return {
    [`${entity.name}Aggregate`]: {
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'object',
          required: ['groups', 'totalGroups'],
          properties: {
            groups: { type: 'array', items: aggregateGroupSchema(entity) },
            totalGroups: { type: 'integer' },
          },
        },
      },
    },
    [entity.name]: recordSchema(entity, relatedEntities),
    [`${entity.name}Create`]: withPlainLocales(entity, bodies.create),
    [`${entity.name}Update`]: withPlainLocales(entity, bodies.update),
    [`${entity.name}Increment`]: bodies.increment,
    [`${entity.name}List`]: {
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'object',
          required: ['items', 'totalCount', 'totalPages'],
          properties: {
            items: { type: 'array', items: ref(entity.name) },
            totalCount: { type: 'integer' },
            totalPages: { type: 'integer' },
            nextCursor: { type: 'string' },
          },
        },
      },
    },
  };
}

const FILTER_TYPES: Record<string, JsonSchema> = {
  int: { type: 'integer' },
  float: { type: 'number' },
  boolean: { type: 'boolean' },
};

function filterSchema(field: FieldModel): JsonSchema {
  const scalar: ValueModel = field.type === 'array' ? (field.items ?? { type: 'string' }) : field;
  return (
    FILTER_TYPES[scalar.type] ??
    (scalar.type === 'enum' ? { type: 'string', enum: (scalar.values ?? []).map((v) => v.key) } : { type: 'string' })
  );
}

/** `field[op]` for each operator the field's type takes (`price[gt]=10`, `status[in]=a,b`). */
function operatorParameters(field: FieldModel): JsonSchema[] {
  const value = filterSchema(field);
  return operatorsFor(field).map((op) => ({
    name: `${field.name}[${op}]`,
    in: 'query',
    description: `records whose ${field.name} ${field.type === 'array' && op !== 'nin' ? `holds a value that ${OPERATOR_MEANINGS[op]}` : OPERATOR_MEANINGS[op]}`,
    schema:
      op === 'exists'
        ? { type: 'boolean' }
        : op === 'in' || op === 'nin'
          ? { anyOf: [{ type: 'string' }, { type: 'array', items: value, maxItems: MAX_FILTER_VALUES }] }
          : op === 'contains' || op === 'startsWith'
            ? { type: 'string', minLength: 1, maxLength: 200 }
            : value,
  }));
}

function filterParameter(field: FieldModel): JsonSchema {
  const schema = filterSchema(field);
  return {
    name: field.name,
    in: 'query',
    description:
      field.type === 'array'
        ? `records whose ${field.name} holds any of the values (repeat the parameter)`
        : `records whose ${field.name} equals the value`,
    schema: field.type === 'array' ? { anyOf: [schema, { type: 'array', items: schema }] } : schema,
  };
}

/**
 * The entity's filter parameters (`kind`, `kind[in]`, ...) as reusable components, keyed
 * `<plural>.<field>` and `<plural>.<field>.<op>`: the list and the aggregation both refer to them.
 */
export function filterParameterComponents(entity: EntityModel): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const name of entity.filters) {
    const field = entity.fields.find((f) => f.name === name)!;
    out[`${entity.plural}.${name}`] = filterParameter(field);
    for (const parameter of operatorParameters(field))
      out[`${entity.plural}.${name}.${(parameter.name as string).slice(name.length + 1, -1)}`] = parameter;
  }
  return out;
}
