import type { Registry } from '../context/defineRegistry.js';
import { ACCUMULATORS, groupableFields, MAX_GROUP_KEYS, measurableFields } from '../model/aggregateFields.js';
import { writableFields } from '../model/entityRoutes.js';
import { MAX_FILTER_VALUES, OPERATOR_MEANINGS, operatorsFor } from '../model/filterOperators.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../model/idempotency.js';
import type { EndpointModel, EntityModel, FieldModel, ValueModel } from '../model/types.js';
import { type JsonSchema, objectSchema } from '../model/valueSchema.js';
import { MAX_QUERY_TEXT } from '../query/listQuery.js';

// The MCP server's tools, derived from the entity files: for each of the app's entities the list,
// get, search and aggregate tools, the writes, and each custom endpoint, with input schemas made
// the way the validators' are (runtime/model/valueSchema.ts) and output schemas of the records
// the tools answer. Built once per registry; which a caller sees is decided per request.

/** What a tool does; each kind calls the operation its HTTP route calls. */
export type ToolKind = 'list' | 'get' | 'search' | 'aggregate' | 'create' | 'update' | 'delete' | 'endpoint';

export interface McpTool {
  name: string;
  title: string;
  description: string;
  kind: ToolKind;
  entity: EntityModel;
  /** The permission action a caller needs on the entity (`view`, `create`, `edit`, `delete`, a custom one). */
  action: string;
  /** Whether it changes nothing (listed under `mcp.readOnly`). */
  reads: boolean;
  endpoint?: EndpointModel;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: false };
}

/** Records a list tool answers at most, and by default: an agent reads pages, not tables. */
export const MCP_MAX_PAGE = 50;
export const MCP_DEFAULT_PAGE = 20;
/** Groups an aggregate tool answers at most. */
export const MCP_MAX_GROUPS = 100;

const catalogs = new WeakMap<Registry, McpTool[]>();

/** Every tool the app could offer, in a stable order (entity by entity). */
export function mcpTools(registry: Registry): McpTool[] {
  let tools = catalogs.get(registry);
  if (!tools) {
    tools = [];
    for (const { model, routes } of registry.entities.values()) {
      if (model.origin !== 'app' || model.internal || !routes) continue;
      const names = new Set(routes.map(([, , name]) => name));
      tools.push(...entityTools(model, names));
    }
    catalogs.set(registry, tools);
  }
  return tools;
}

/** The tool of this name, if the app has one. */
export function mcpTool(registry: Registry, name: string): McpTool | undefined {
  return mcpTools(registry).find((tool) => tool.name === name);
}

function entityTools(entity: EntityModel, routes: ReadonlySet<string>): McpTool[] {
  const tools: McpTool[] = [];
  const about = entity.description ? ` ${entity.description}` : '';
  const record = recordSchema(entity);
  const page = pageSchema(record);
  const read = (kind: ToolKind, title: string, description: string, input: JsonSchema, output: JsonSchema) =>
    tools.push(tool(entity, kind, 'view', title, description, input, output, { reads: true }));
  if (routes.has('list')) {
    read(
      'list',
      `List ${entity.label}`,
      `A page of ${entity.label} the caller may see, newest first unless sorted; nextCursor asks for the next page.${about}`,
      listInput(entity),
      page,
    );
    if (entity.fields.some((f) => f.search && !f.hidden && !f.access))
      read(
        'search',
        `Search ${entity.label}`,
        `${entity.label} whose text matches the query (full-text, best matches first), as the caller may see them.`,
        searchInput(entity),
        page,
      );
  }
  if (routes.has('get'))
    read(
      'get',
      `Get a ${entity.name}`,
      `One ${entity.name} by id, as the caller may see it.${about}`,
      idInput(),
      record,
    );
  if (routes.has('aggregate'))
    read(
      'aggregate',
      `Aggregate ${entity.label}`,
      `Counts, sums, averages, minimums and maximums of ${entity.label}, grouped by up to ${MAX_GROUP_KEYS} fields (dates by day, week, month or year).`,
      aggregateInput(entity),
      aggregateOutput(),
    );
  if (routes.has('create'))
    tools.push(
      tool(
        entity,
        'create',
        'create',
        `Create a ${entity.name}`,
        `Creates a ${entity.name} with the given fields; answers the record as stored.${about}`,
        withKey(bodySchema(entity, 'create')),
        record,
        { reads: false, idempotent: false },
      ),
    );
  if (routes.has('update'))
    tools.push(
      tool(
        entity,
        'update',
        'edit',
        `Update a ${entity.name}`,
        `Changes the given fields of one ${entity.name} (others stay as they are); answers the record after the change.`,
        withKey({
          type: 'object',
          additionalProperties: false,
          required: ['id', 'changes'],
          properties: { id: ID, changes: bodySchema(entity, 'update') },
        }),
        record,
        { reads: false, idempotent: true },
      ),
    );
  if (routes.has('remove'))
    tools.push(
      tool(
        entity,
        'delete',
        'delete',
        `Delete a ${entity.name}`,
        entity.trash
          ? `Moves one ${entity.name} to the trash, from where an administrator may restore it.`
          : `Deletes one ${entity.name} for good.`,
        withKey(idInput()),
        {
          type: 'object',
          required: ['id', 'deleted'],
          properties: { id: { type: 'string' }, deleted: { type: 'boolean' }, trashed: { type: 'boolean' } },
        },
        { reads: false, idempotent: true, destructive: true },
      ),
    );
  for (const endpoint of entity.endpoints ?? []) {
    if (!routes.has(`endpoint:${endpoint.name}`)) continue;
    const reads = endpoint.method === 'GET';
    tools.push({
      ...tool(
        entity,
        'endpoint',
        endpoint.action,
        `${entity.label}: ${endpoint.name}`,
        endpoint.description ??
          `The ${endpoint.name} endpoint of ${entity.label} (${endpoint.method} ${endpoint.path}).`,
        reads ? endpointInput(endpoint) : withKey(endpointInput(endpoint)),
        endpoint.response === 'record'
          ? record
          : { type: 'object', required: ['result'], properties: { result: { description: "The endpoint's answer" } } },
        { reads, idempotent: reads || endpoint.method === 'PUT', destructive: endpoint.method === 'DELETE' },
      ),
      name: toolName(entity, endpoint.name),
      endpoint,
    });
  }
  return tools;
}

function tool(
  entity: EntityModel,
  kind: ToolKind,
  action: string,
  title: string,
  description: string,
  inputSchema: JsonSchema,
  outputSchema: JsonSchema,
  hints: { reads: boolean; idempotent?: boolean; destructive?: boolean },
): McpTool {
  return {
    name: toolName(entity, kind),
    title,
    description,
    kind,
    entity,
    action,
    reads: hints.reads,
    inputSchema,
    outputSchema,
    annotations: {
      readOnlyHint: hints.reads,
      destructiveHint: hints.destructive ?? false,
      idempotentHint: hints.reads || (hints.idempotent ?? false),
      openWorldHint: false,
    },
  };
}

/** `<plural>_<what>`, within MCP's name alphabet and 64 characters. */
function toolName(entity: EntityModel, what: string): string {
  return `${entity.plural}_${what}`.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64);
}

/** A write tool's optional key: the same call repeated with it runs once (as Idempotency-Key over HTTP). */
export const IDEMPOTENCY_KEY = 'idempotencyKey';
const KEY_SCHEMA: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
  description: 'Any unique text: a repeat of this call with the same key runs once and answers the same (24 hours)',
};

/** A write tool's input with the optional idempotencyKey (not where a field of that name takes its place). */
function withKey(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema>;
  if (IDEMPOTENCY_KEY in properties) return schema;
  return { ...schema, properties: { ...properties, [IDEMPOTENCY_KEY]: KEY_SCHEMA } };
}

const ID: JsonSchema = { type: 'string', minLength: 1, maxLength: 100, description: "The record's id" };

function idInput(): JsonSchema {
  return { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID } };
}

/** A create or update body as the entity's validators check it, each field described. */
function bodySchema(entity: EntityModel, mode: 'create' | 'update'): JsonSchema {
  const fields = writableFields(entity);
  return withDescriptions(objectSchema(fields, mode), fields);
}

/** Adds each field's description to an object schema's properties. */
function withDescriptions(schema: JsonSchema, fields: FieldModel[]): JsonSchema {
  const properties = { ...(schema.properties as Record<string, JsonSchema>) };
  for (const field of fields) {
    if (!properties[field.name]) continue;
    properties[field.name] = { ...properties[field.name], description: fieldDescription(field) };
  }
  return { ...schema, properties };
}

function fieldDescription(field: FieldModel): string {
  const text = field.description ?? field.label;
  if (field.type === 'objectId' && field.ref) return `${text} (the id of a ${field.ref} record)`;
  return text;
}

/** A record as the tools answer it: every field the caller may see; unset ones null; further keys allowed. */
function recordSchema(entity: EntityModel): JsonSchema {
  const properties: Record<string, JsonSchema> = { id: { type: 'string' } };
  for (const field of entity.fields) {
    if (field.hidden || field.name === 'id') continue;
    properties[field.name] = { ...answerValue(field), description: fieldDescription(field) };
  }
  return { type: 'object', description: entity.description ?? entity.label, properties, required: ['id'] };
}

/** A value's type in an answer; constraints are the validators' business, not the answer's. */
function answerValue(value: ValueModel & { localized?: unknown }): JsonSchema {
  if (value.localized || value.type === 'any' || value.type === 'object') return {};
  const types: Record<string, string> = { int: 'integer', float: 'number', boolean: 'boolean', array: 'array' };
  return { type: [types[value.type] ?? 'string', 'null'] };
}

function pageSchema(record: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['items', 'totalCount'],
    properties: {
      items: { type: 'array', items: record },
      totalCount: { type: 'integer', description: 'How many records match, on every page' },
      nextCursor: { type: 'string', description: 'Pass as cursor for the next page; absent on the last' },
    },
  };
}

function aggregateOutput(): JsonSchema {
  return {
    type: 'object',
    required: ['groups', 'totalGroups'],
    properties: {
      groups: {
        type: 'array',
        items: {
          type: 'object',
          required: ['key', 'count'],
          properties: { key: { type: 'object' }, count: { type: 'integer' } },
        },
      },
      totalGroups: { type: 'integer' },
    },
  };
}

/** `filter`: the entity's filters, each a value or `{ operator: value }` as the list language has them. */
function filterInput(entity: EntityModel): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const name of entity.filters) {
    const field = entity.fields.find((f) => f.name === name);
    // Fields under `access:` too: tools/list leaves out those the caller may not see (mcpServer.ts).
    if (!field || field.hidden) continue;
    const scalar = filterValue(field);
    const operators: Record<string, JsonSchema> = {};
    for (const op of operatorsFor(field)) {
      operators[op] =
        op === 'exists'
          ? { type: 'boolean', description: OPERATOR_MEANINGS[op] }
          : op === 'in' || op === 'nin'
            ? { type: 'array', items: scalar, maxItems: MAX_FILTER_VALUES, description: OPERATOR_MEANINGS[op] }
            : op === 'contains' || op === 'startsWith'
              ? { type: 'string', minLength: 1, maxLength: 200, description: OPERATOR_MEANINGS[op] }
              : { ...scalar, description: OPERATOR_MEANINGS[op] };
    }
    properties[name] = {
      description: `${fieldDescription(field)}: a value it equals, or operators`,
      anyOf: [scalar, { type: 'object', additionalProperties: false, minProperties: 1, properties: operators }],
    };
  }
  return {
    type: 'object',
    additionalProperties: false,
    description: 'Conditions on fields, all of which must hold: {"status": "open", "price": {"gte": 10}}',
    properties,
  };
}

function filterValue(field: FieldModel): JsonSchema {
  const scalar: ValueModel = field.type === 'array' ? (field.items ?? { type: 'string' }) : field;
  if (scalar.type === 'int') return { type: 'integer' };
  if (scalar.type === 'float') return { type: 'number' };
  if (scalar.type === 'boolean') return { type: 'boolean' };
  if (scalar.type === 'enum') return { type: 'string', enum: (scalar.values ?? []).map((v) => v.key) };
  return { type: 'string', maxLength: 500 };
}

const LIMIT: JsonSchema = {
  type: 'integer',
  minimum: 1,
  maximum: MCP_MAX_PAGE,
  description: `Records per page (default ${MCP_DEFAULT_PAGE}, at most ${MCP_MAX_PAGE})`,
};

function listInput(entity: EntityModel): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      filter: filterInput(entity),
      sort: {
        type: 'string',
        maxLength: 200,
        description:
          'Fields to order by, comma-separated, each with - for descending (-createdAt,name); not with cursor',
      },
      limit: LIMIT,
      cursor: { type: 'string', maxLength: 1000, description: 'The nextCursor of the previous page' },
      ...(entity.ownership === 'owned'
        ? { includeArchived: { type: 'boolean', description: 'Archived records too' } }
        : {}),
    },
  };
}

function searchInput(entity: EntityModel): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['query'],
    properties: {
      query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_TEXT, description: 'Words to look for' },
      filter: filterInput(entity),
      limit: LIMIT,
    },
  };
}

function aggregateInput(entity: EntityModel): JsonSchema {
  const names = (fields: FieldModel[]) => fields.filter((f) => !f.access).map((f) => f.name);
  const groupable = names(groupableFields(entity));
  const measures = Object.fromEntries(
    ACCUMULATORS.map((op) => {
      const fields = names(measurableFields(entity, op));
      return [
        op,
        {
          type: 'array',
          maxItems: 20,
          items: { type: 'string', enum: fields },
          description: `Fields to take the ${op} of, per group`,
        },
      ];
    }).filter(([, schema]) => (((schema as JsonSchema).items as JsonSchema).enum as string[]).length > 0),
  );
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      filter: filterInput(entity),
      groupBy: {
        type: 'array',
        maxItems: MAX_GROUP_KEYS,
        items: { type: 'string', maxLength: 100 },
        description: `Fields to group by (${groupable.join(', ') || 'none'}); a date as field:day, :week, :month or :year`,
      },
      ...measures,
      sort: {
        type: 'string',
        maxLength: 200,
        description: 'Result columns to order by, comma-separated, - for descending: count, a groupBy field, sum.total',
      },
      limit: { type: 'integer', minimum: 1, maximum: MCP_MAX_GROUPS, description: 'Groups at most' },
      timeZone: { type: 'string', maxLength: 64, description: 'IANA time zone of date buckets (default UTC)' },
    },
  };
}

function endpointInput(endpoint: EndpointModel): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  if (endpoint.byId) {
    properties.id = ID;
    required.push('id');
  }
  if (endpoint.body) {
    properties.body = withDescriptions(objectSchema(endpoint.body, 'create'), endpoint.body);
    if (endpoint.body.some((f) => f.required && f.default === undefined)) required.push('body');
  }
  return { type: 'object', additionalProperties: false, properties, ...(required.length > 0 ? { required } : {}) };
}
