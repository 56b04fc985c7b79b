import { fieldView, requireFieldEdits } from '../access/fieldAccess.js';
import { findWritable } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import type { EntityModel } from '../model/types.js';
import { type Doc, ValueOutOfRange } from '../store/types.js';
import { requireValid } from '../write/createRecord.js';
import { encryptFields, normalizeDates } from '../write/prepareWrite.js';
import { runWrite } from '../write/writePipeline.js';
import { presentRecord } from './presentRecord.js';

export interface IncrementOperationInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  body: unknown;
  caller: Caller;
  changeReason?: string;
}

/**
 * PATCH /{plural}/{id}/increment: numeric fields change atomically in the database; no
 * read-modify-write. A result outside the field's range (int: a safe integer, float: finite)
 * rolls the increment back and answers 422.
 */
export async function incrementOperation({
  ctx,
  plural,
  id,
  body,
  caller,
  changeReason,
}: IncrementOperationInput): Promise<Doc> {
  const { model, validators } = entityOf(ctx, plural);
  const { doc: current, where } = await findWritable(ctx, model, id, caller, 'edit');
  const amounts = requireValid(validators.increment, body) as Record<string, number>;
  requireFieldEdits(model, caller, amounts, current);
  try {
    // Always in a transaction: a result out of range or bounds rolls the increment back.
    const updated = await ctx.store.transaction((tx) =>
      runWrite({
        ctx: { ...ctx, store: tx },
        entity: model,
        caller,
        operation: 'increment',
        changeReason,
        write: async ({ store, now, beforeUpdate }) => {
          const before = (await store.get(plural, id)) ?? undefined;
          let after = await store.increment(plural, id, amounts, { updatedAt: now.toISOString() }, where);
          if (!after) throw notFound(model.name);
          refuseOutOfRange(model, amounts, after);
          refuseOutOfBounds(model, amounts, after);
          // beforeUpdate sees the resulting values; a change it returns is written in the same transaction.
          const resulting = Object.fromEntries(Object.keys(amounts).map((name) => [name, after![name]]));
          const patch = await beforeUpdate(id, resulting, before ?? after);
          const changed = Object.fromEntries(
            Object.entries(patch).filter(([name, value]) => resulting[name] !== value),
          );
          if (Object.keys(changed).length > 0) {
            after = (await store.update(plural, id, encryptFields(model, normalizeDates(model, changed), ctx.cipher)))!;
          }
          return { result: after, changes: [{ changeType: 'update', event: 'incremented', before, after }] };
        },
      }),
    );
    return presentRecord(model, updated, fieldView(model, caller));
  } catch (error) {
    // Only a float can overflow in the database (ints are bounded well inside 64 bits).
    if (error instanceof ValueOutOfRange)
      throw outOfRange(
        model,
        Object.keys(amounts).filter((name) => typeOf(model, name) === 'float'),
      );
    throw error;
  }
}

const typeOf = (model: EntityModel, name: string) => model.fields.find((f) => f.name === name)?.type;

function refuseOutOfRange(model: EntityModel, amounts: Record<string, number>, after: Doc): void {
  const bad = Object.keys(amounts).filter((name) => {
    const value = after[name];
    return (
      typeof value !== 'number' ||
      (typeOf(model, name) === 'int' ? !Number.isSafeInteger(value) : !Number.isFinite(value))
    );
  });
  if (bad.length > 0) throw outOfRange(model, bad);
}

/** A field's declared min and max hold for the result of an increment too (400, nothing changed). */
function refuseOutOfBounds(model: EntityModel, amounts: Record<string, number>, after: Doc): void {
  const details: Record<string, string> = {};
  for (const name of Object.keys(amounts)) {
    const field = model.fields.find((f) => f.name === name);
    const value = after[name] as number;
    if (field?.min !== undefined && value < field.min)
      details[name] = `must be at least ${field.min}; the increment would make it ${value}`;
    if (field?.max !== undefined && value > field.max)
      details[name] = `must be at most ${field.max}; the increment would make it ${value}`;
  }
  if (Object.keys(details).length > 0)
    throw validationError(details, 'The increment would break a field constraint; nothing changed');
}

function outOfRange(model: EntityModel, names: string[]): ApiError {
  const details = Object.fromEntries(
    names.map((name) => [
      name,
      typeOf(model, name) === 'int'
        ? `would leave the safe integer range (±${Number.MAX_SAFE_INTEGER})`
        : 'would no longer be a finite number',
    ]),
  );
  return new ApiError(
    'UNPROCESSABLE_ENTITY',
    `The increment would take ${names.join(', ')} out of range; nothing changed`,
    details,
  );
}
