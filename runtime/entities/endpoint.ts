import { fieldView } from '../access/fieldAccess.js';
import { findWritable, scopeFor } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { contextInTrace } from '../context/carryTrace.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, notFound } from '../errors/apiError.js';
import { endpointValidatorName } from '../model/entityRoutes.js';
import type { AppModel, EndpointModel } from '../model/types.js';
import { traceOf } from '../store/tracedStore.js';
import type { Doc } from '../store/types.js';
import { type Context, inSpan, type Span } from '../telemetry/tracing.js';
import { requireValid } from '../write/createRecord.js';
import { type MaskedNames, maskedNames, presentJson } from './presentJson.js';
import { presentRecord } from './presentRecord.js';

export interface EndpointInput {
  ctx: RuntimeContext;
  plural: string;
  name: string;
  /** The record's id, for `/{id}/...` endpoints. */
  id?: string;
  body: unknown;
  caller: Caller;
}

const READS_BODY: readonly string[] = ['POST', 'PUT', 'PATCH'];
/** The masked field names of each app model, worked out once. */
const MASKED = new WeakMap<object, MaskedNames>();

/** Whether an endpoint's method carries a body (and so has a generated body validator). */
export function readsBody(endpoint: EndpointModel): boolean {
  return READS_BODY.includes(endpoint.method);
}

/**
 * A custom endpoint: the caller's permission for its action (401/403), the record with the
 * caller's visibility (404 when hidden, 403 when visible but outside the action's scope), the
 * body checked by its generated validator, then the handler of the entity's hook module in one
 * transaction. `record` answers are shown as GET shows records, and so is every object of a `json`
 * answer (presentJson.ts: no hidden field, encrypted values masked), except the records the handler
already showed with `present`.
 */
export async function endpointOperation({ ctx, plural, name, id, body, caller }: EndpointInput): Promise<unknown> {
  const { model, validators } = entityOf(ctx, plural);
  const endpoint = model.endpoints?.find((e) => e.name === name);
  if (!endpoint) throw notFound(`Endpoint ${name}`);
  const handler = ctx.hooks.get(plural)?.endpoints?.[name];
  let record: Doc | undefined;
  if (endpoint.byId) record = (await findWritable(ctx, model, id ?? '', caller, endpoint.action)).doc;
  else await scopeFor(ctx, caller, model, endpoint.action);
  const input = readsBody(endpoint) ? requireValid(validators[endpointValidatorName(name)], body ?? {}) : undefined;
  if (!handler) throw new Error(`endpoint ${plural}.${name} has no handler in the hook module`);
  const now = ctx.now();
  const presented = new WeakSet<object>();
  const result = await ctx.store.transaction(async (store) => {
    const current = record ? ((await store.get(plural, record.id)) ?? record) : undefined;
    // The handler's repositories write in the transaction, beneath the handler's span when traced.
    const run = (_span?: Span, trace?: Context) =>
      handler({
        ...(current ? { id: current.id, record: current } : {}),
        body: input,
        caller,
        now,
        repositories: ctx.repositoriesFor?.({
          ctx: contextInTrace({ ...ctx, store }, trace),
          caller,
          now,
          origin: `endpoint:${name}`,
          depth: 1,
          path: [plural],
        }),
        present: (shown: Doc | null | undefined, of: string = plural) => {
          const entity = entityOf(ctx, of).model;
          if (!shown) return shown;
          const record = presentRecord(entity, shown, fieldView(entity, caller));
          presented.add(record);
          return record;
        },
      });
    const parent = traceOf(store);
    return parent
      ? inSpan(
          `endpoint ${plural}.${name}`,
          { attributes: { 'entigen.entity': plural, 'entigen.endpoint': name }, parent },
          run,
        )
      : run();
  });
  ctx.notifyCommitted?.();
  if (endpoint.response === 'json') {
    // Records a handler read through its repositories are as stored; none goes out so.
    const app = ctx.registry.model;
    const names = MASKED.get(app) ?? maskedNames(app);
    MASKED.set(app, names);
    return presentJson(result ?? null, withUnseen(names, app, caller), presented);
  }
  const doc = (result as Doc | undefined) ?? (record ? await ctx.store.get(plural, record.id) : undefined);
  if (!doc) throw record ? notFound(model.name) : new ApiError('INTERNAL_ERROR');
  return presentRecord(model, doc, fieldView(model, caller));
}

/**
 * The names a json answer leaves out for this caller: besides every entity's hidden fields, each
 * field under `access:` the caller may not see on every record (a handler's answer is not a
 * record whose owner could be told).
 */
function withUnseen(names: MaskedNames, app: AppModel, caller: Caller): MaskedNames {
  const unseen = app.entities.flatMap((entity) => [...(fieldView(entity, caller)?.unseen ?? [])]);
  return unseen.length === 0 ? names : { ...names, hidden: new Set([...names.hidden, ...unseen]) };
}
