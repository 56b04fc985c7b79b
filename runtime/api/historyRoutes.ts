import type { JsonSchema } from '../model/valueSchema.js';
import { BY_ID, type EntityRouteKind, Query, record, VERSION } from './entityRoute.js';
import { Body, Component, Enum, Text, Type } from './schemas.js';

// The history routes of an entity: versions, the audit log and the changes of tracked fields.

/** `limit` (1-200) and `cursor` of the history lists. */
const HistoryPage = Query({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  cursor: Type.Optional(Text(2000)),
});

const historyList = (item: string): JsonSchema => ({
  type: 'object',
  required: ['items', 'total', 'hasMore'],
  properties: {
    items: { type: 'array', items: Component(item) },
    total: { type: 'integer' },
    hasMore: { type: 'boolean' },
    nextCursor: { type: 'string' },
  },
});

/** Versions where the entity keeps them in full, the audit log where it keeps one. */
export const HISTORY_ROUTES: EntityRouteKind[] = [
  {
    name: 'versions',
    method: 'GET',
    path: '/{id}/versions',
    has: (e) => e.versioning === 'full',
    declare: () => ({
      summary: 'Versions, newest first',
      query: HistoryPage,
      response: historyList('Version'),
      errors: [...BY_ID, 'VALIDATION_ERROR'],
    }),
    client: { name: 'versions' },
  },
  {
    name: 'compareVersions',
    method: 'GET',
    path: '/{id}/versions/compare',
    has: (e) => e.versioning === 'full',
    declare: () => ({
      summary: 'Compare two versions field by field',
      query: Query({ a: VERSION, b: VERSION }),
      response: Component('VersionComparison'),
      errors: [...BY_ID, 'VALIDATION_ERROR'],
    }),
    client: { name: 'compareVersions', positional: true },
  },
  {
    name: 'version',
    method: 'GET',
    path: '/{id}/versions/{version}',
    has: (e) => e.versioning === 'full',
    declare: () => ({
      summary: 'One version',
      params: { version: VERSION },
      response: Component('Version'),
      errors: BY_ID,
    }),
    client: { name: 'version' },
  },
  {
    name: 'revert',
    method: 'POST',
    path: '/{id}/revert/{version}',
    has: (e) => e.versioning === 'full',
    declare: (e) => ({
      summary: 'Restore the state of a version as a new version',
      params: { version: VERSION },
      body: Body({ changeReason: Type.Optional(Text(1000)) }),
      bodyOptional: true,
      response: {
        type: 'object',
        required: ['success', 'revertedTo', 'newVersion', 'entity'],
        properties: {
          success: { type: 'boolean' },
          revertedTo: { type: 'integer' },
          newVersion: { type: 'integer' },
          entity: record(e),
        },
      },
      errors: [...BY_ID, 'VALIDATION_ERROR', 'CONFLICT', 'UNPROCESSABLE_ENTITY'],
      changeReason: true,
    }),
    client: { name: 'revert', bodyField: 'changeReason' },
  },
  {
    name: 'audit',
    method: 'GET',
    path: '/{id}/audit',
    has: (e) => e.versioning === 'simple',
    declare: () => ({
      summary: 'Audit log, newest first',
      query: HistoryPage,
      response: historyList('AuditLog'),
      errors: [...BY_ID, 'VALIDATION_ERROR'],
    }),
    client: { name: 'audit' },
  },
];

/** After the reverse relations: the changes of tracked fields. */
export const TRACKED_ROUTES: EntityRouteKind[] = [
  {
    name: 'fieldChanges',
    method: 'GET',
    path: '/{id}/field-changes',
    has: (e) => e.fields.some((f) => f.trackChanges),
    declare: () => ({
      summary: 'Changes of tracked fields',
      query: Query({
        fieldName: Type.Optional(Text(200)),
        approvalStatus: Type.Optional(Enum(['pending', 'approved', 'rejected'])),
      }),
      response: {
        type: 'object',
        required: ['items'],
        properties: { items: { type: 'array', items: Component('FieldChange') } },
      },
      errors: [...BY_ID, 'VALIDATION_ERROR'],
    }),
    client: { name: 'fieldChanges' },
  },
  {
    name: 'decideFieldChange',
    method: 'PUT',
    path: '/{id}/field-changes/{changeId}',
    has: (e) => e.fields.some((f) => f.trackChanges),
    declare: () => ({
      summary: 'Approve or reject a change (admin)',
      access: 'signedIn',
      body: Body({ approvalStatus: Enum(['approved', 'rejected']), approvedBy: Type.Optional(Text(200)) }),
      response: Component('FieldChange'),
      errors: [...BY_ID, 'VALIDATION_ERROR', 'UNPROCESSABLE_ENTITY'],
    }),
    client: { name: 'decideFieldChange' },
  },
];
