import type { ErrorCode } from '../../../runtime/errors/apiError.js';
import {
  ACCUMULATORS,
  DEFAULT_GROUPS,
  groupableFields,
  MAX_GROUP_KEYS,
  MAX_GROUPS,
  measurableFields,
} from '../../../runtime/model/aggregateFields.js';
import type { RouteSpec } from '../../../runtime/model/entityRoutes.js';
import { MAX_FILTER_VALUES, OPERATOR_MEANINGS, operatorsFor } from '../../../runtime/model/filterOperators.js';
import { AGGREGATE_FILTER_PARAMETERS, LIST_PARAMETERS } from '../../../runtime/model/listParameters.js';
import type { EntityModel, FieldModel, ValueModel } from '../../../runtime/model/types.js';
import { type JsonSchema, objectSchema, valueSchema } from '../../model/valueSchema.js';
import { bodySchemas } from '../emitValidators.js';
import { ref } from './components.js';
import type { Operation } from './operation.js';

// Each entity's schemas and the OpenAPI operation of each route in its route table.

export const API_PREFIX = '/api/v1';

/** `/articles/:id/versions/:version` -> `/articles/{id}/versions/{version}` */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z]+)/g, '{$1}');
}

/** A record as the server answers it: every visible field, unset ones null, references possibly populated. */
function recordSchema(entity: EntityModel, relatedEntities: ReadonlyMap<string, EntityModel>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const field of entity.fields.filter((f) => !f.hidden))
    properties[field.name] = field.localized
      ? localizedValue(field)
      : responseValue(field, !field.required || !field.system);
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

function aggregateParameters(entity: EntityModel): JsonSchema[] {
  const names = (fields: FieldModel[]) => fields.map((f) => f.name).join(', ') || 'none';
  const dates = groupableFields(entity).filter((f) => f.type === 'isoDate');
  const measure = (op: (typeof ACCUMULATORS)[number], meaning: string) => ({
    name: op,
    in: 'query',
    description: `${meaning} of these fields per group, comma-separated (${names(measurableFields(entity, op))})`,
    schema: { type: 'string' },
  });
  return [
    {
      name: 'groupBy',
      in: 'query',
      description: `Up to ${MAX_GROUP_KEYS} fields, comma-separated: ${names(groupableFields(entity).filter((f) => f.type !== 'isoDate'))}; a date field with a bucket: ${dates.map((f) => `${f.name}:day|week|month|year`).join(', ') || 'none'}. Without groupBy: one group of every record.`,
      schema: { type: 'string' },
      ...(dates.length > 0 ? { example: `${dates[0].name}:month` } : {}),
    },
    {
      name: 'timeZone',
      in: 'query',
      description: 'IANA time zone the date buckets are computed in (default UTC)',
      schema: { type: 'string', default: 'UTC' },
    },
    measure('sum', 'Sum (0 when no record has a value)'),
    measure('avg', 'Average'),
    measure('min', 'Minimum'),
    measure('max', 'Maximum'),
    {
      name: 'sort',
      in: 'query',
      description:
        'Result columns, comma-separated, `-` for descending: count, a groupBy field, or sum.<field>, avg.<field>, min.<field>, max.<field>. Default: the groupBy fields ascending.',
      schema: { type: 'string' },
    },
    {
      name: 'limit',
      in: 'query',
      description: 'Groups per answer',
      schema: { type: 'integer', minimum: 1, maximum: MAX_GROUPS, default: DEFAULT_GROUPS },
    },
    { name: 'skip', in: 'query', description: 'Groups to skip', schema: { type: 'integer', minimum: 0 } },
  ];
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

/** The `$ref`s of an entity's filter parameters; built once per entity (every list-shaped operation takes them). */
const filterRefs = new WeakMap<EntityModel, JsonSchema[]>();

function filterReferences(entity: EntityModel): JsonSchema[] {
  let refs = filterRefs.get(entity);
  if (!refs) {
    refs = Object.keys(filterParameterComponents(entity)).map((key) => ({ $ref: `#/components/parameters/${key}` }));
    filterRefs.set(entity, refs);
  }
  return refs;
}

/** The list's parameters: `trash` only where the entity keeps one. */
function listParameters(entity: EntityModel): JsonSchema[] {
  return LIST_PARAMETERS.filter((p) => p !== 'trash' || entity.trash).map((p) => ({
    $ref: `#/components/parameters/${p}`,
  }));
}

/** Entity operations that write history, and so take a change reason. */
const WRITES = new Set([
  'create',
  'bulkCreate',
  'update',
  'remove',
  'increment',
  'archive',
  'restore',
  'restoreFromTrash',
  'revert',
]);

export function entityOperation(
  entity: EntityModel,
  [method, path, name]: RouteSpec,
  relatedEntities: ReadonlyMap<string, EntityModel>,
): Operation {
  const record = ref(entity.name);
  const single = { type: 'object', properties: { data: record }, required: ['data'] };
  const base: Pick<Operation, 'method' | 'path' | 'tag' | 'operationId' | 'tenantScoped' | 'changeReason'> = {
    tenantScoped: entity.tenantScoped && !name.startsWith('metadata'),
    changeReason: WRITES.has(name),
    method,
    path: openApiPath(`${API_PREFIX}${path}`),
    tag: entity.plural,
    operationId: `${entity.plural}_${name}`,
  };
  const label = entity.label;
  const byId = ['NOT_FOUND', 'UNAUTHORIZED', 'FORBIDDEN'] as ErrorCode[];
  const write = [...byId, 'VALIDATION_ERROR', 'CONFLICT', 'UNPROCESSABLE_ENTITY', 'PAYLOAD_TOO_LARGE'] as ErrorCode[];
  if (name.startsWith('relation:')) {
    const relation = entity.relations!.find((r) => `relation:${r.name}` === name)!;
    const related = relatedEntities.get(relation.entity)!;
    return {
      ...base,
      operationId: `${entity.plural}_${relation.name}`,
      summary:
        relation.description ??
        `${relation.label}: the ${related.label} whose ${relation.field} references this ${entity.name}, with the list's query parameters`,
      query: [...listParameters(related), ...filterReferences(related)],
      response: ref(`${related.name}List`),
      errors: [...byId, 'VALIDATION_ERROR'],
    };
  }
  if (name.startsWith('endpoint:')) {
    const endpoint = entity.endpoints!.find((e) => `endpoint:${e.name}` === name)!;
    const reads = ['POST', 'PUT', 'PATCH'].includes(endpoint.method);
    return {
      ...base,
      operationId: `${entity.plural}_${endpoint.name}`,
      summary:
        endpoint.description ??
        `${endpoint.name} (custom endpoint; needs ${entity.plural}:${endpoint.action}${endpoint.byId ? '[:own|:all]' : ''})`,
      ...(reads
        ? { body: objectSchema(endpoint.body ?? [], 'create'), bodyOptional: !endpoint.body?.some((f) => f.required) }
        : {}),
      response:
        endpoint.response === 'record' ? single : { type: 'object', properties: { data: {} }, required: ['data'] },
      errors: [
        'UNAUTHORIZED',
        'FORBIDDEN',
        'VALIDATION_ERROR',
        'CONFLICT',
        'UNPROCESSABLE_ENTITY',
        ...(endpoint.byId ? (['NOT_FOUND'] as ErrorCode[]) : []),
        ...(reads ? (['PAYLOAD_TOO_LARGE'] as ErrorCode[]) : []),
      ],
    };
  }
  switch (name) {
    case 'list':
      return {
        ...base,
        summary: `List ${label}`,
        query: [...listParameters(entity), ...filterReferences(entity)],
        response: ref(`${entity.name}List`),
        errors: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN'],
      };
    case 'aggregate':
      return {
        ...base,
        summary: `Count, sum, average, minimum and maximum of ${label}, per group`,
        query: [
          ...aggregateParameters(entity),
          ...AGGREGATE_FILTER_PARAMETERS.map((p) => ({ $ref: `#/components/parameters/${p}` })),
          ...filterReferences(entity),
        ],
        response: ref(`${entity.name}Aggregate`),
        errors: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN'],
      };
    case 'get':
      return {
        ...base,
        summary: `One ${entity.name}`,
        query: [{ $ref: '#/components/parameters/populate' }],
        response: single,
        errors: [...byId, 'VALIDATION_ERROR'],
      };
    case 'create':
      return {
        ...base,
        summary: `Create a ${entity.name}`,
        status: 201,
        body: ref(`${entity.name}Create`),
        response: single,
        errors: write,
      };
    case 'bulkCreate':
      return {
        ...base,
        summary: `Create up to 500 ${label} at once, all or nothing`,
        status: 201,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['items'],
          properties: { items: { type: 'array', maxItems: 500, items: ref(`${entity.name}Create`) } },
        },
        response: {
          type: 'object',
          required: ['data'],
          properties: {
            data: {
              type: 'object',
              required: ['items', 'count'],
              properties: { items: { type: 'array', items: record }, count: { type: 'integer' } },
            },
          },
        },
        errors: write.filter((c) => c !== 'NOT_FOUND'),
      };
    case 'update':
      return {
        ...base,
        summary: `Change fields of a ${entity.name}`,
        body: ref(`${entity.name}Update`),
        response: single,
        errors: write,
      };
    case 'remove':
      return {
        ...base,
        summary: entity.trash
          ? `Move a ${entity.name} to the trash (permanent=true: delete it for good, with ${entity.plural}:purge)`
          : `Delete a ${entity.name}`,
        ...(entity.trash
          ? {
              query: [
                {
                  name: 'permanent',
                  in: 'query',
                  description: 'delete for good, in the trash or not (needs the purge permission)',
                  schema: { type: 'boolean', default: false },
                },
              ],
            }
          : {}),
        response: {
          type: 'object',
          required: ['data'],
          properties: {
            data: {
              type: 'object',
              required: ['id', 'deleted'],
              properties: {
                id: { type: 'string' },
                deleted: { const: true },
                ...(entity.trash ? { trashed: { const: true, description: 'moved to the trash' } } : {}),
              },
            },
          },
        },
        // 409: records that reference it with onDelete: restrict.
        errors: [...byId, 'CONFLICT'],
      };
    case 'increment':
      return {
        ...base,
        summary: `Add to numeric fields atomically (negative subtracts)`,
        body: ref(`${entity.name}Increment`),
        response: single,
        errors: write,
      };
    case 'archive':
      return {
        ...base,
        summary: `Archive a ${entity.name} (left out of lists unless includeArchived)`,
        response: single,
        errors: [...byId, 'UNPROCESSABLE_ENTITY'],
      };
    case 'restore':
      return {
        ...base,
        summary: `Restore an archived ${entity.name}`,
        response: single,
        errors: [...byId, 'UNPROCESSABLE_ENTITY'],
      };
    case 'restoreFromTrash':
      return {
        ...base,
        summary: `Take a ${entity.name} out of the trash (needs the delete permission)`,
        response: single,
        errors: [...byId, 'CONFLICT'],
      };
    case 'metadata':
      return {
        ...base,
        summary: `Metadata of ${label}`,
        response: { type: 'object', properties: { data: ref('EntityMetadata') }, required: ['data'] },
        errors: [],
      };
    case 'metadataType':
      return {
        ...base,
        summary: `Base and ownership of ${label}`,
        response: { type: 'object', properties: { data: { type: 'object' } }, required: ['data'] },
        errors: [],
      };
    case 'metadataFields':
      return {
        ...base,
        summary: `Fields of ${label}`,
        response: {
          type: 'object',
          required: ['data'],
          properties: {
            data: {
              type: 'object',
              required: ['fields'],
              properties: { fields: { type: 'array', items: ref('FieldMetadata') } },
            },
          },
        },
        errors: [],
      };
    case 'metadataField':
      return {
        ...base,
        summary: `One field of ${label}`,
        response: { type: 'object', properties: { data: ref('FieldMetadata') }, required: ['data'] },
        errors: ['NOT_FOUND'],
      };
    case 'versions':
      return {
        ...base,
        summary: 'Versions, newest first',
        query: historyPage(),
        response: historyList('Version'),
        errors: [...byId, 'VALIDATION_ERROR'],
      };
    case 'version':
      return { ...base, summary: 'One version', response: ref('Version'), errors: byId };
    case 'compareVersions':
      return {
        ...base,
        summary: 'Compare two versions field by field',
        query: ['a', 'b'].map((p) => ({
          name: p,
          in: 'query',
          required: true,
          schema: { type: 'integer', minimum: 1 },
        })),
        response: ref('VersionComparison'),
        errors: [...byId, 'VALIDATION_ERROR'],
      };
    case 'revert':
      return {
        ...base,
        summary: 'Restore the state of a version as a new version',
        body: { type: 'object', properties: { changeReason: { type: 'string' } } },
        bodyOptional: true,
        response: {
          type: 'object',
          required: ['success', 'revertedTo', 'newVersion', 'entity'],
          properties: {
            success: { type: 'boolean' },
            revertedTo: { type: 'integer' },
            newVersion: { type: 'integer' },
            entity: record,
          },
        },
        errors: [...byId, 'VALIDATION_ERROR', 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
      };
    case 'audit':
      return {
        ...base,
        summary: 'Audit log, newest first',
        query: historyPage(),
        response: historyList('AuditLog'),
        errors: [...byId, 'VALIDATION_ERROR'],
      };
    case 'fieldChanges':
      return {
        ...base,
        summary: 'Changes of tracked fields',
        query: [
          { name: 'fieldName', in: 'query', schema: { type: 'string' } },
          {
            name: 'approvalStatus',
            in: 'query',
            schema: { type: 'string', enum: ['pending', 'approved', 'rejected'] },
          },
        ],
        response: {
          type: 'object',
          required: ['items'],
          properties: { items: { type: 'array', items: ref('FieldChange') } },
        },
        errors: [...byId, 'VALIDATION_ERROR'],
      };
    case 'decideFieldChange':
      return {
        ...base,
        summary: 'Approve or reject a change (admin)',
        security: 'required',
        body: {
          type: 'object',
          required: ['approvalStatus'],
          properties: { approvalStatus: { enum: ['approved', 'rejected'] }, approvedBy: { type: 'string' } },
        },
        response: ref('FieldChange'),
        errors: [...byId, 'VALIDATION_ERROR', 'UNPROCESSABLE_ENTITY'],
      };
  }
  throw new Error(`no OpenAPI operation for route ${name}`);
}

function historyPage(): JsonSchema[] {
  return [
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200 } },
    { name: 'cursor', in: 'query', schema: { type: 'string' } },
  ];
}

function historyList(item: string): JsonSchema {
  return {
    type: 'object',
    required: ['items', 'total', 'hasMore'],
    properties: {
      items: { type: 'array', items: ref(item) },
      total: { type: 'integer' },
      hasMore: { type: 'boolean' },
      nextCursor: { type: 'string' },
    },
  };
}
