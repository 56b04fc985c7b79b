import { incrementableFields } from '../model/entityRoutes.js';
import type { JsonSchema } from '../model/valueSchema.js';
import { aggregateGrammar, listGrammar } from './entityParameters.js';
import { BY_ID, type EntityRouteKind, record, single, WRITE, writes } from './entityRoute.js';
import { Component, Type } from './schemas.js';

// The routes every entity's records have (some only where the entity has what they need).

const metadata = (schema: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: { data: schema },
  required: ['data'],
});

/**
 * The routes of an entity's records, in match order (fixed paths before `{id}`): metadata, list,
 * aggregation, the writes, the trash.
 */
export const RECORD_ROUTES: EntityRouteKind[] = [
  {
    name: 'metadata',
    method: 'GET',
    path: '/metadata',
    declare: (e) => ({
      summary: `Metadata of ${e.label}`,
      response: metadata(Component('EntityMetadata')),
      errors: [],
    }),
  },
  {
    name: 'metadataType',
    method: 'GET',
    path: '/metadata/type',
    declare: (e) => ({
      summary: `Base and ownership of ${e.label}`,
      response: metadata({ type: 'object' }),
      errors: [],
    }),
  },
  {
    name: 'metadataFields',
    method: 'GET',
    path: '/metadata/fields',
    declare: (e) => ({
      summary: `Fields of ${e.label}`,
      response: metadata({
        type: 'object',
        required: ['fields'],
        properties: { fields: { type: 'array', items: Component('FieldMetadata') } },
      }),
      errors: [],
    }),
  },
  {
    name: 'metadataField',
    method: 'GET',
    path: '/metadata/field/{name}',
    declare: (e) => ({
      summary: `One field of ${e.label}`,
      response: metadata(Component('FieldMetadata')),
      errors: ['NOT_FOUND'],
    }),
  },
  {
    name: 'aggregate',
    method: 'GET',
    path: '/aggregate',
    declare: (e) => ({
      summary: `Count, sum, average, minimum and maximum of ${e.label}, per group`,
      grammar: { parser: 'aggregate', parameters: aggregateGrammar(e) },
      response: Component(`${e.name}Aggregate`),
      errors: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN'],
      localized: true,
    }),
    client: {
      name: 'aggregate',
      unwrap: true,
      doc: 'Count, sum, average, minimum and maximum per group, over the records you may see.',
    },
  },
  {
    name: 'list',
    method: 'GET',
    path: '',
    declare: (e) => ({
      summary: `List ${e.label}`,
      grammar: { parser: 'list', parameters: listGrammar(e) },
      response: Component(`${e.name}List`),
      errors: ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN'],
      localized: true,
    }),
    client: { name: 'list', unwrap: true },
  },
  {
    name: 'create',
    method: 'POST',
    path: '',
    declare: (e) => ({
      summary: `Create a ${e.name}`,
      status: 201,
      body: Component(`${e.name}Create`),
      bodyCheckedBy: 'entity',
      response: single(e),
      errors: WRITE,
      ...writes,
    }),
    client: { name: 'create', unwrap: true, options: true },
  },
  {
    name: 'bulkCreate',
    method: 'POST',
    path: '/bulk',
    declare: (e) => ({
      summary: `Create up to 500 ${e.label} at once, all or nothing`,
      status: 201,
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['items'],
        properties: { items: { type: 'array', maxItems: 500, items: Component(`${e.name}Create`) } },
      },
      bodyCheckedBy: 'entity',
      response: {
        type: 'object',
        required: ['data'],
        properties: {
          data: {
            type: 'object',
            required: ['items', 'count'],
            properties: { items: { type: 'array', items: record(e) }, count: { type: 'integer' } },
          },
        },
      },
      errors: WRITE.filter((c) => c !== 'NOT_FOUND'),
      ...writes,
    }),
    client: {
      name: 'bulk',
      unwrap: true,
      options: true,
      bodyField: 'items',
      doc: 'Up to 500 records, all or nothing.',
    },
  },
  {
    name: 'get',
    method: 'GET',
    path: '/{id}',
    declare: (e) => ({
      summary: `One ${e.name}`,
      grammar: { parser: 'populate', parameters: [{ $ref: '#/components/parameters/populate' }] },
      response: single(e),
      errors: [...BY_ID, 'VALIDATION_ERROR'],
      localized: true,
    }),
    client: { name: 'get', unwrap: true },
  },
  {
    name: 'update',
    method: 'PATCH',
    path: '/{id}',
    declare: (e) => ({
      summary: `Change fields of a ${e.name}`,
      body: Component(`${e.name}Update`),
      bodyCheckedBy: 'entity',
      response: single(e),
      errors: WRITE,
      ...writes,
    }),
    client: { name: 'update', unwrap: true, options: true },
  },
  {
    name: 'remove',
    method: 'DELETE',
    path: '/{id}',
    declare: (e) => ({
      summary: e.trash
        ? `Move a ${e.name} to the trash (permanent=true: delete it for good, with ${e.plural}:purge)`
        : `Delete a ${e.name}`,
      // Other parameters are left alone: `changeReason` may come as one.
      query: Type.Object(
        e.trash
          ? {
              permanent: Type.Optional(
                Type.Boolean({
                  description: 'delete for good, in the trash or not (needs the purge permission)',
                  default: false,
                }),
              ),
            }
          : {},
        { additionalProperties: true },
      ),
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
              ...(e.trash ? { trashed: { const: true, description: 'moved to the trash' } } : {}),
            },
          },
        },
      },
      // 409: records that reference it with onDelete: restrict.
      errors: [...BY_ID, 'CONFLICT'],
      changeReason: true,
    }),
    client: {
      name: 'remove',
      unwrap: true,
      options: true,
      doc: 'Deletes the record; where the entity keeps a trash it moves there (`trashed: true`) unless `permanent` (which needs the purge permission).',
    },
  },
  {
    name: 'increment',
    method: 'PATCH',
    path: '/{id}/increment',
    has: (e) => incrementableFields(e).length > 0,
    declare: (e) => ({
      summary: 'Add to numeric fields atomically (negative subtracts)',
      body: Component(`${e.name}Increment`),
      bodyCheckedBy: 'entity',
      response: single(e),
      errors: WRITE,
      ...writes,
    }),
    client: {
      name: 'increment',
      unwrap: true,
      options: true,
      doc: 'Adds to numeric fields atomically (negative amounts subtract).',
    },
  },
  {
    name: 'archive',
    method: 'POST',
    path: '/{id}/archive',
    has: (e) => e.ownership === 'owned',
    declare: (e) => ({
      summary: `Archive a ${e.name} (left out of lists unless includeArchived)`,
      response: single(e),
      errors: [...BY_ID, 'UNPROCESSABLE_ENTITY'],
      ...writes,
    }),
    client: { name: 'archive', unwrap: true, options: true },
  },
  {
    name: 'restore',
    method: 'POST',
    path: '/{id}/restore',
    has: (e) => e.ownership === 'owned',
    declare: (e) => ({
      summary: `Restore an archived ${e.name}`,
      response: single(e),
      errors: [...BY_ID, 'UNPROCESSABLE_ENTITY'],
      ...writes,
    }),
    client: { name: 'restore', unwrap: true, options: true },
  },
  {
    name: 'restoreFromTrash',
    method: 'POST',
    path: '/{id}/restore-from-trash',
    has: (e) => Boolean(e.trash),
    declare: (e) => ({
      summary: `Take a ${e.name} out of the trash (needs the delete permission)`,
      response: single(e),
      errors: [...BY_ID, 'CONFLICT'],
      ...writes,
    }),
    client: {
      name: 'restoreFromTrash',
      unwrap: true,
      options: true,
      doc: 'Takes a record out of the trash, as it was when it went in.',
    },
  },
];
