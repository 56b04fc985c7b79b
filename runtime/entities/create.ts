import { fieldView, requireFieldEdits } from '../access/fieldAccess.js';
import { creationRule, requireCreatable, scopeFor } from '../access/requireAccess.js';
import { tenantForCreate } from '../access/tenancy.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError } from '../errors/apiError.js';
import type { Doc } from '../store/types.js';
import { buildNewRecord, newRecordValues, requireValid } from '../write/createRecord.js';
import { resolveMacros } from '../write/prepareWrite.js';
import { runWrite } from '../write/writePipeline.js';
import { writtenIn } from './localize.js';
import { presentRecord } from './presentRecord.js';

export interface CreateInput {
  ctx: RuntimeContext;
  plural: string;
  body: unknown;
  caller: Caller;
  changeReason?: string;
  /** Values only the server sets (read-only and hidden fields), given the new record. */
  serverFields?: (doc: Doc) => Record<string, unknown>;
  /** The new record's id, chosen before the write (an upload stores its file under it first). */
  id?: string;
  /** The locale plain values of localized fields are written in (default: the default locale). */
  locale?: string;
}

/** POST /{plural}: access -> validate -> defaults and macros -> store -> the created record. */
export async function createOperation({
  ctx,
  plural,
  body,
  caller,
  changeReason,
  serverFields,
  id,
  locale,
}: CreateInput): Promise<Doc> {
  const { model, validators } = entityOf(ctx, plural);
  await scopeFor(ctx, caller, model, 'create');
  const rule = await creationRule(ctx, caller, model);
  const input = requireValid(validators.create, writtenIn(ctx, model, body, locale));
  requireFieldEdits(model, caller, input);
  if (model.ownership === 'owned' && !caller.user)
    throw new ApiError('UNAUTHORIZED', 'Sign in to create owned records');
  const tenantId = model.tenantScoped ? await tenantForCreate(ctx, caller) : undefined;
  const created = await runWrite({
    ctx,
    entity: model,
    caller,
    operation: 'create',
    changeReason,
    references: [{ values: resolveMacros(input, caller, ctx.now()) }],
    rule: { create: [input] },
    write: async ({ store, now, beforeCreate }) => {
      const values = await beforeCreate(newRecordValues(model, input, caller, now));
      const doc = buildNewRecord(model, values, caller, ctx, now, tenantId);
      if (id) doc.id = id;
      if (serverFields) Object.assign(doc, serverFields(doc));
      await requireCreatable(store, model, rule, doc);
      const after = await store.insert(plural, doc);
      return { result: after, changes: [{ changeType: 'create', after, fresh: true }] };
    },
  });
  return presentRecord(model, created, fieldView(model, caller));
}
