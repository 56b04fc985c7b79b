import { fieldView, requireFieldEdits } from '../access/fieldAccess.js';
import { creationRule, requireCreatable, scopeFor } from '../access/requireAccess.js';
import { tenantForCreate } from '../access/tenancy.js';
import type { Caller } from '../context/caller.js';
import { entityOf } from '../context/entityOf.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError, validationError } from '../errors/apiError.js';
import type { Doc } from '../store/types.js';
import { buildNewRecord, newRecordValues, validateBody } from '../write/createRecord.js';
import { resolveMacros } from '../write/prepareWrite.js';
import { runWrite } from '../write/writePipeline.js';
import { writtenIn } from './localize.js';
import { presentRecord } from './presentRecord.js';

export const MAX_BULK_ITEMS = 500;

export interface BulkCreateInput {
  ctx: RuntimeContext;
  plural: string;
  body: unknown;
  caller: Caller;
  changeReason?: string;
  /** The locale plain values of localized fields are written in (default: the default locale). */
  locale?: string;
}

/** POST /{plural}/bulk: `{ items }`, at most 500, all or nothing; every invalid item reported. */
export async function bulkCreateOperation({
  ctx,
  plural,
  body,
  caller,
  changeReason,
  locale,
}: BulkCreateInput): Promise<{ items: Doc[]; count: number }> {
  const { model, validators } = entityOf(ctx, plural);
  await scopeFor(ctx, caller, model, 'create');
  const rule = await creationRule(ctx, caller, model);
  const items = readItems(body).map((item) => writtenIn(ctx, model, item, locale));
  const details: Record<string, string> = {};
  for (const [i, item] of items.entries())
    Object.assign(details, validateBody(validators.bulkItem, item, `items.${i}`));
  if (Object.keys(details).length > 0) throw validationError(details);
  for (const [i, item] of items.entries())
    requireFieldEdits(model, caller, item as Record<string, unknown>, undefined, `items.${i}.`);
  if (model.ownership === 'owned' && !caller.user)
    throw new ApiError('UNAUTHORIZED', 'Sign in to create owned records');
  const tenantId = model.tenantScoped ? await tenantForCreate(ctx, caller) : undefined;
  const created = await runWrite({
    ctx,
    entity: model,
    caller,
    operation: 'create',
    changeReason,
    references: items.map((item, i) => ({
      values: resolveMacros(item as Record<string, unknown>, caller, ctx.now()),
      prefix: `items.${i}.`,
    })),
    rule: { create: items as Record<string, unknown>[] },
    write: async ({ store, now, beforeCreate }) => {
      const docs: Doc[] = [];
      for (const [i, item] of items.entries()) {
        const values = await underItem(i, () =>
          beforeCreate(newRecordValues(model, item as Record<string, unknown>, caller, now)),
        );
        const doc = buildNewRecord(model, values, caller, ctx, now, tenantId);
        await underItem(i, () => requireCreatable(store, model, rule, doc));
        docs.push(doc);
      }
      const inserted = await store.insertMany(plural, docs);
      return {
        result: inserted,
        changes: inserted.map((after) => ({ changeType: 'create' as const, after, fresh: true })),
      };
    },
  });
  const view = fieldView(model, caller);
  return { items: created.map((doc) => presentRecord(model, doc, view)), count: created.length };
}

/** A hook's refusal of one item names its fields under items.<i>. */
async function underItem<T>(index: number, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const details = Object.fromEntries(
      Object.entries(error.details ?? { '': error.message }).map(([key, message]) => [
        key ? `items.${index}.${key}` : `items.${index}`,
        message,
      ]),
    );
    throw new ApiError(error.code, error.message, details);
  }
}

function readItems(body: unknown): unknown[] {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw validationError({ body: 'must be an object { items: [...] }' });
  const extra = Object.keys(body).filter((key) => key !== 'items');
  if (extra.length > 0) throw validationError(Object.fromEntries(extra.map((key) => [key, 'is not allowed'])));
  const items = (body as { items?: unknown }).items;
  if (!Array.isArray(items)) throw validationError({ items: 'must be an array' });
  if (items.length === 0) throw validationError({ items: 'must hold at least one item' });
  if (items.length > MAX_BULK_ITEMS) throw validationError({ items: `must hold at most ${MAX_BULK_ITEMS} items` });
  return items;
}
