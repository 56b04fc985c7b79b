import { ERROR_CODES, type ErrorCode } from '../../../runtime/errors/apiError.js';
import type { JsonSchema } from '../../model/valueSchema.js';

// The document's shared components: history and metadata schemas, the error envelope and its
// responses, the list query parameters and the request headers.

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

export function sharedSchemas(): Record<string, JsonSchema> {
  const changeType = { enum: ['create', 'update', 'delete', 'archive', 'restore', 'revert'] };
  const when = { type: 'string' };
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
    Version: {
      type: 'object',
      required: ['id', 'entityId', 'version', 'snapshot', 'changedBy', 'changeType', 'createdAt', 'updatedAt'],
      properties: {
        id: { type: 'string' },
        entityId: { type: 'string' },
        version: { type: 'integer' },
        snapshot: {},
        changedBy: { type: 'string' },
        changeReason: { type: ['string', 'null'] },
        changeType,
        changedFields: { type: ['array', 'null'], items: { type: 'string' } },
        createdAt: when,
        updatedAt: when,
      },
    },
    VersionComparison: {
      type: 'object',
      required: ['entityId', 'versionA', 'versionB', 'changes', 'totalChanges'],
      properties: {
        entityId: { type: 'string' },
        versionA: { $ref: '#/components/schemas/VersionSummary' },
        versionB: { $ref: '#/components/schemas/VersionSummary' },
        changes: {
          type: 'array',
          items: {
            type: 'object',
            required: ['field', 'changed'],
            properties: { field: { type: 'string' }, oldValue: {}, newValue: {}, changed: { type: 'boolean' } },
          },
        },
        totalChanges: { type: 'integer' },
      },
    },
    VersionSummary: {
      type: 'object',
      required: ['version', 'createdAt', 'changedBy'],
      properties: { version: { type: 'integer' }, createdAt: when, changedBy: { type: 'string' } },
    },
    AuditLog: {
      type: 'object',
      required: ['id', 'entityId', 'changedBy', 'changeType', 'createdAt', 'updatedAt'],
      properties: {
        id: { type: 'string' },
        entityId: { type: 'string' },
        changedBy: { type: 'string' },
        changeType,
        changedFields: { type: ['array', 'null'], items: { type: 'string' } },
        changes: {
          type: ['object', 'null'],
          additionalProperties: { type: 'object', properties: { old: {}, new: {} } },
        },
        changeReason: { type: ['string', 'null'] },
        createdAt: when,
        updatedAt: when,
      },
    },
    FieldChange: {
      type: 'object',
      required: ['id', 'entityId', 'fieldName', 'changedBy', 'createdAt', 'updatedAt'],
      properties: {
        id: { type: 'string' },
        entityId: { type: 'string' },
        fieldName: { type: 'string' },
        oldValue: {},
        newValue: {},
        changedBy: { type: 'string' },
        changeReason: { type: ['string', 'null'] },
        approvedBy: { type: ['string', 'null'] },
        approvalStatus: { enum: ['pending', 'approved', 'rejected', null] },
        metadata: { type: ['object', 'null'] },
        createdAt: when,
        updatedAt: when,
      },
    },
    EntityMetadata: {
      type: 'object',
      required: [
        'name',
        'plural',
        'label',
        'base',
        'ownership',
        'versioning',
        'tenantScoped',
        'filters',
        'searchFields',
        'relations',
        'origin',
        'sortable',
      ],
      properties: {
        name: { type: 'string' },
        plural: { type: 'string' },
        label: { type: 'string' },
        description: { type: ['string', 'null'] },
        base: { type: 'string' },
        ownership: { type: 'string' },
        versioning: { type: 'string' },
        tenantScoped: { type: 'boolean' },
        filters: { type: 'array', items: { type: 'string' } },
        searchFields: { type: 'array', items: { type: 'string' } },
        origin: {
          type: 'string',
          description:
            'Where the entity comes from: `app` (the entity files), `builtin` (the package), `feature:<name>`',
        },
        sortable: {
          type: 'array',
          items: { type: 'string' },
          description: 'Fields declared sortable: an index serves their order (any field may still be sorted on)',
        },
        statusTransitions: {
          type: 'object',
          description: 'Content base only: for each status, the statuses an update may move it to',
          additionalProperties: { type: 'array', items: { type: 'string' } },
        },
        relations: {
          type: 'array',
          description: 'Reverse relations: populate=<name> and GET /{plural}/{id}/<name>',
          items: {
            type: 'object',
            required: ['name', 'label', 'entity', 'field'],
            properties: {
              name: { type: 'string' },
              label: { type: 'string' },
              entity: { type: 'string' },
              field: { type: 'string' },
              description: { type: ['string', 'null'] },
            },
          },
        },
        fields: { type: 'array', items: { $ref: '#/components/schemas/FieldMetadata' } },
      },
    },
    FieldMetadata: {
      type: 'object',
      required: ['name', 'type', 'required', 'unique', 'search', 'trackChanges', 'filterable'],
      properties: {
        name: { type: 'string' },
        label: { type: 'string' },
        type: { type: 'string' },
        required: { type: 'boolean' },
        unique: { type: 'boolean' },
        default: {},
        values: {
          type: ['array', 'null'],
          items: {
            type: 'object',
            required: ['key', 'label'],
            properties: { key: { type: 'string' }, label: { type: 'string' } },
          },
        },
        ref: { type: ['string', 'null'] },
        search: { type: 'boolean' },
        trackChanges: { type: 'boolean' },
        filterable: { type: 'boolean' },
        properties: {
          type: 'array',
          items: { $ref: '#/components/schemas/FieldMetadata' },
          description: 'Objects with declared properties: each property as a field',
        },
        operators: {
          type: 'array',
          items: { type: 'string' },
          description: 'Filters only: the comparison operators the list takes as `field[op]=value`',
        },
        constraints: {
          type: 'object',
          description:
            "The field's declared constraints (present only when it has some); items: those of an array's items",
          properties: {
            min: { type: 'number' },
            max: { type: 'number' },
            minLength: { type: 'integer' },
            maxLength: { type: 'integer' },
            pattern: { type: 'string' },
            format: { enum: ['email', 'uri', 'uuid', 'date-time'] },
            minItems: { type: 'integer' },
            maxItems: { type: 'integer' },
            items: { type: 'object' },
          },
        },
      },
    },
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
