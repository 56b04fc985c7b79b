import { COMPONENTS } from '../../../runtime/api/components.js';
import { ERROR_CODES, type ErrorCode } from '../../../runtime/errors/apiError.js';
import type { JsonSchema } from '../../../runtime/model/valueSchema.js';

// The document's shared components: history and metadata schemas, the error envelope and its
// responses, the list query parameters and the request headers.

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

export function sharedSchemas(): Record<string, JsonSchema> {
  return {
    Error: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { enum: Object.keys(ERROR_CODES) },
            message: { type: 'string' },
            details: { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
      },
    },
    ...COMPONENTS,
  };
}

export function listParameters(): Record<string, JsonSchema> {
  const q = (name: string, description: string, schema: JsonSchema, extra: JsonSchema = {}) => ({
    name,
    in: 'query',
    description,
    schema,
    ...extra,
  });
  const integer = (minimum: number, maximum?: number) => ({
    type: 'integer',
    minimum,
    ...(maximum ? { maximum } : {}),
  });
  return {
    id: q('id', 'only the records with these ids: comma-separated or repeated, at most 100', {
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', pattern: '^[0-9a-f]{24}$' } }],
    }),
    q: q('q', 'every term must match, case- and accent-insensitive, as a word prefix in some searchable field', {
      type: 'string',
    }),
    limit: q('limit', 'page size', { ...integer(1, 200), default: 25 }),
    page: q('page', '1-based page number', integer(1)),
    skip: q('skip', 'records to skip', integer(0)),
    offset: q('offset', 'alias of skip', integer(0)),
    cursor: q('cursor', 'nextCursor of the previous page (not with a custom sort, page, skip or offset)', {
      type: 'string',
    }),
    sort: q(
      'sort',
      '`field` or `-field`; or sort[field], sort[direction], sort[collation][locale], sort[collation][strength], sort[collation][numericOrdering]',
      {
        anyOf: [
          { type: 'string' },
          {
            type: 'object',
            properties: {
              field: { type: 'string' },
              direction: { enum: ['asc', 'desc'] },
              collation: { type: 'object' },
            },
          },
        ],
      },
      { style: 'deepObject', explode: true },
    ),
    sortBy: q('sortBy', 'field to sort by', { type: 'string' }),
    sortDir: q('sortDir', 'direction for sortBy', { enum: ['asc', 'desc'] }),
    select: q('select', 'fields to return (id always), comma-separated or repeated', {
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    }),
    includeArchived: q('includeArchived', 'include archived records', { type: 'boolean' }),
    trash: q(
      'trash',
      'only: the records in the trash; include: those too (entities that keep a trash; trashed records the caller may delete)',
      { enum: ['only', 'include'] },
    ),
    populate: q(
      'populate',
      'reference fields to replace by their records: comma-separated, repeated, or populate[paths]=...&populate[depth]=1..5',
      { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, { type: 'object' }] },
      { style: 'deepObject', explode: true },
    ),
    dateFrom: q('dateFrom', 'records on or after this ISO 8601 date', { type: 'string' }),
    dateTo: q('dateTo', 'records on or before this ISO 8601 date', { type: 'string' }),
    dateMonth: q('dateMonth', 'YYYY-MM: that month', { type: 'string', pattern: '^\\d{4}-\\d{2}$' }),
    dateField: q('dateField', 'the date field the date parameters apply to (default createdAt)', { type: 'string' }),
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      description:
        'a repeat of this POST by the same caller within 24 hours answers the first response (idempotency-replayed: true) and runs nothing',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    },
    TenantId: {
      name: 'x-tenant-id',
      in: 'header',
      description:
        'the tenant to act in, for callers who belong to several (required to create then); 403 for a tenant you are not in',
      schema: { type: 'string' },
    },
    ChangeReason: {
      name: 'x-change-reason',
      in: 'header',
      description: 'why the change is made; kept in the change history',
      schema: { type: 'string', maxLength: 1000 },
    },
  };
}

export function errorResponses(): Record<string, JsonSchema> {
  const headers = (code: ErrorCode): JsonSchema =>
    code === 'RATE_LIMITED'
      ? { headers: { 'retry-after': { description: 'seconds to wait', schema: { type: 'integer' } } } }
      : {};
  return Object.fromEntries(
    (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => [
      code,
      { description: `${code}: ${ERROR_CODES[code].message}`, ...headers(code), content: json(ref('Error')) },
    ]),
  );
}
