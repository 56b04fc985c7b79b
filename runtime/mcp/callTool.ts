import AjvModule, { type ValidateFunction } from 'ajv';
import { fieldView } from '../access/fieldAccess.js';
import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { aggregateOperation } from '../entities/aggregate.js';
import { createOperation } from '../entities/create.js';
import { endpointOperation } from '../entities/endpoint.js';
import { getOperation } from '../entities/get.js';
import { listOperation, openListCursor } from '../entities/list.js';
import { removeOperation } from '../entities/remove.js';
import { updateOperation } from '../entities/update.js';
import { validationError } from '../errors/apiError.js';
import { validationDetails } from '../model/validationDetails.js';
import type { ListQuery } from '../query/listQuery.js';
import { parseAggregateQuery } from '../query/parseAggregateQuery.js';
import { parseListQuery } from '../query/parseListQuery.js';
import { IDEMPOTENCY_KEY, MCP_DEFAULT_PAGE, MCP_MAX_GROUPS, type McpTool } from './mcpTools.js';
import { onceFor } from './toolIdempotency.js';

const Ajv = AjvModule.default;
/** The tools' input schemas, compiled on first use. */
const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new WeakMap<McpTool, ValidateFunction>();

type Args = Record<string, unknown>;

/** Why a write was made, in the history and audit log of what an agent changed: MCP, and the API key. */
function changeReasonOf(caller: Caller): string {
  return caller.credential?.kind === 'apiKey' ? `via MCP, API key ${caller.credential.id}` : 'via MCP';
}

/**
 * Runs one tool for the caller: its arguments checked against its input schema (400 naming each
 * problem), then the operation its HTTP route runs, with the same access, field and write rules.
 * Answers the structured content; throws the operation's ApiError.
 */
export async function callTool(
  ctx: RuntimeContext,
  tool: McpTool,
  args: unknown,
  caller: Caller,
): Promise<Record<string, unknown>> {
  const input = checked(tool, args ?? {});
  if (tool.reads) return read(ctx, tool, input, caller);
  // A write's idempotencyKey is the tool's, not the record's (unless a field of that name takes its place).
  const keyed =
    IDEMPOTENCY_KEY in input && (tool.kind !== 'create' || !tool.entity.fields.some((f) => f.name === IDEMPOTENCY_KEY));
  const { [IDEMPOTENCY_KEY]: key, ...rest } = input;
  const body = keyed ? rest : input;
  return onceFor(ctx, caller, tool.name, keyed ? (key as string) : undefined, body, () =>
    write(ctx, tool, body, caller),
  );
}

async function read(ctx: RuntimeContext, tool: McpTool, input: Args, caller: Caller): Promise<Record<string, unknown>> {
  const plural = tool.entity.plural;
  switch (tool.kind) {
    case 'list':
    case 'search':
      return listed(ctx, tool, input, caller);
    case 'get':
      return getOperation({ ctx, plural, id: input.id as string, caller });
    case 'aggregate': {
      const raw = {
        ...filterQuery(input.filter),
        ...(input.groupBy ? { groupBy: input.groupBy } : {}),
        ...Object.fromEntries(['sum', 'avg', 'min', 'max'].filter((op) => input[op]).map((op) => [op, input[op]])),
        ...(input.sort !== undefined ? { sort: input.sort } : {}),
        ...(input.timeZone !== undefined ? { timeZone: input.timeZone } : {}),
        limit: String(input.limit ?? MCP_MAX_GROUPS),
      };
      const query = parseAggregateQuery(tool.entity, raw, fieldView(tool.entity, caller)?.unseen);
      return { ...(await aggregateOperation({ ctx, plural, query, caller })) };
    }
    default:
      return endpoint(ctx, tool, input, caller);
  }
}

async function write(
  ctx: RuntimeContext,
  tool: McpTool,
  input: Args,
  caller: Caller,
): Promise<Record<string, unknown>> {
  const plural = tool.entity.plural;
  const changeReason = changeReasonOf(caller);
  switch (tool.kind) {
    case 'create':
      return createOperation({ ctx, plural, body: input, caller, changeReason });
    case 'update':
      return updateOperation({ ctx, plural, id: input.id as string, body: input.changes, caller, changeReason });
    case 'delete':
      return { ...(await removeOperation({ ctx, plural, id: input.id as string, caller, changeReason })) };
    default:
      return endpoint(ctx, tool, input, caller);
  }
}

/** A custom endpoint: a `record` answer as the record, a `json` one under `result`. */
async function endpoint(ctx: RuntimeContext, tool: McpTool, input: Args, caller: Caller) {
  const declared = tool.endpoint!;
  const answer = await endpointOperation({
    ctx,
    plural: tool.entity.plural,
    name: declared.name,
    id: input.id as string | undefined,
    body: input.body ?? (declared.body ? {} : undefined),
    caller,
  });
  return declared.response === 'record' ? (answer as Record<string, unknown>) : { result: answer ?? null };
}

function checked(tool: McpTool, args: unknown): Args {
  let validate = validators.get(tool);
  if (!validate) {
    validate = ajv.compile(tool.inputSchema);
    validators.set(tool, validate);
  }
  if (!validate(args)) throw validationError(validationDetails(validate.errors ?? []), 'Invalid tool arguments');
  return args as Args;
}

/** A list or search tool: the list's own query grammar, read from typed arguments. */
async function listed(ctx: RuntimeContext, tool: McpTool, input: Args, caller: Caller) {
  const raw: Record<string, unknown> = {
    ...filterQuery(input.filter),
    limit: String(input.limit ?? MCP_DEFAULT_PAGE),
    ...(tool.kind === 'search' ? { q: input.query } : {}),
    ...(input.sort !== undefined ? { sort: input.sort } : {}),
    ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
    ...(input.includeArchived !== undefined ? { includeArchived: String(input.includeArchived) } : {}),
  };
  const query: ListQuery = parseListQuery(tool.entity, raw, {
    openCursor: (cursor) => openListCursor(ctx, cursor),
    entity: (name) => ctx.registry.entities.get(name)?.model,
    unseen: fieldView(tool.entity, caller)?.unseen,
  });
  const page = await listOperation({ ctx, plural: tool.entity.plural, query, caller });
  return {
    items: page.items,
    totalCount: page.totalCount,
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** `{ price: { gte: 10 }, tags: ['a'] }` as the query string's parameters (`price[gte]=10`). */
function filterQuery(filter: unknown): Record<string, unknown> {
  if (!filter) return {};
  const text = (value: unknown): unknown => (Array.isArray(value) ? value.map(String) : String(value));
  return Object.fromEntries(
    Object.entries(filter as Args).map(([field, value]) => [
      field,
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value as Args).map(([op, operand]) => [op, text(operand)]))
        : text(value),
    ]),
  );
}
