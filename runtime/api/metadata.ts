import { route } from './route.js';
import { Component, Data, Type } from './schemas.js';

// /api/v1/schema: the entities and their fields, for clients that build themselves from them.

const metadata = { tag: 'schema', access: 'optional' } as const;

export const EntitySummary = Type.Object({
  name: Type.String(),
  plural: Type.String(),
  label: Type.String(),
  origin: Type.String(),
});

export const schemaMetadata = route({
  ...metadata,
  method: 'GET',
  path: '/api/v1/schema/metadata',
  operationId: 'schema_metadata',
  summary: 'Every entity with its fields',
  response: Data(Type.Object({ entities: Type.Array(Component('EntityMetadata')) })),
  errors: [],
});

export const schemaList = route({
  ...metadata,
  method: 'GET',
  path: '/api/v1/schema/metadata/list',
  operationId: 'schema_list',
  summary: 'Entity names',
  response: Data(Type.Object({ items: Type.Array(EntitySummary) })),
  errors: [],
});

export const schemaEntity = route({
  ...metadata,
  method: 'GET',
  path: '/api/v1/schema/metadata/{entity}',
  operationId: 'schema_entity',
  summary: 'One entity (by plural or name) with its fields',
  response: Data(Component('EntityMetadata')),
  errors: ['NOT_FOUND'],
});
