import { fieldView, requireFieldEdits } from '../access/fieldAccess.js';
import { findWritable } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { notFound } from '../errors/apiError.js';
import type { Doc } from '../store/types.js';
import { requireValid } from '../write/createRecord.js';
import { applyContentStatus, copyValues, encryptFields, normalizeDates, resolveMacros } from '../write/prepareWrite.js';
import { runWrite } from '../write/writePipeline.js';
import { writtenIn } from './localize.js';
import { presentRecord } from './presentRecord.js';

export interface UpdateInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  body: unknown;
  caller: Caller;
  changeReason?: string;
  /** The locale plain values of localized fields are written in (default: the default locale). */
  locale?: string;
}

/** PATCH /{plural}/{id}: access -> validate (partial) -> macros -> status rules -> store -> the record after. */
export async function updateOperation({
  ctx,
  plural,
  id,
  body,
  caller,
  changeReason,
  locale,
}: UpdateInput): Promise<Doc> {
  const { model, validators } = entityOf(ctx, plural);
  const { doc: current, where } = await findWritable(ctx, model, id, caller, 'edit');
  const input = requireValid(validators.update, writtenIn(ctx, model, body, locale));
  requireFieldEdits(model, caller, input, current);
  const updated = await runWrite({
    ctx,
    entity: model,
    caller,
    operation: 'update',
    changeReason,
    references: [{ values: resolveMacros(input, caller, ctx.now()) }],
    rule: { update: { current, values: input } },
    write: async ({ store, now, beforeUpdate }) => {
      const before = (await store.get(plural, id)) ?? current;
      const patch = await beforeUpdate(id, resolveMacros(input, caller, now), before);
      let values = applyContentStatus(model, patch, before, now);
      values = encryptFields(model, normalizeDates(model, values), ctx.cipher);
      const after = await store.update(
        plural,
        id,
        Object.assign(copyValues(values), { updatedAt: now.toISOString() }),
        where,
      );
      if (!after) throw notFound(model.name);
      return { result: after, changes: [{ changeType: 'update', before, after }] };
    },
  });
  return presentRecord(model, updated, fieldView(model, caller));
}
