import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import { notFound } from '../http/errors.js';
import { entityOf } from './entityOf.js';
import { findWritable } from './requireAccess.js';

export interface RemoveInput {
  ctx: RuntimeContext;
  plural: string;
  id: string;
  caller: Caller;
}

/** DELETE /{plural}/{id}: a hard delete; answers `{ id, deleted: true }`. */
export async function removeOperation({ ctx, plural, id, caller }: RemoveInput): Promise<{ id: string; deleted: true }> {
  const { model } = entityOf(ctx, plural);
  const { where } = await findWritable(ctx, model, id, caller, 'delete');
  if (!(await ctx.store.remove(plural, id, where))) throw notFound(model.name);
  return { id, deleted: true };
}
