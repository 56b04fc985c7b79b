import type { RuntimeContext } from '../context.js';
import { GRANTS } from '../model/collections.js';
import type { Action, EntityModel } from '../model/types.js';
import type { Caller } from './caller.js';

export const GRANTABLE_ACTIONS: readonly Action[] = ['view', 'edit', 'delete'];

export function grantsEnabled(ctx: RuntimeContext): boolean {
  return ctx.registry.entities.has(GRANTS);
}

/** Layer 4: ids of records of `entity` that live grants share with the caller for `action`. */
export async function grantedIds(
  ctx: RuntimeContext,
  caller: Caller,
  entity: EntityModel,
  action: Action | string,
): Promise<string[]> {
  if (
    !grantsEnabled(ctx) ||
    !caller.user ||
    entity.internal ||
    entity.plural === GRANTS ||
    !(GRANTABLE_ACTIONS as readonly string[]).includes(action)
  )
    return [];
  const now = ctx.now().toISOString();
  const grants = await ctx.store.find(GRANTS, {
    where: {
      and: [
        { field: 'entity', op: 'eq', value: entity.plural },
        { field: 'grantedTo', op: 'eq', value: caller.user.id },
        { field: 'permissions', op: 'contains', value: [action] },
        {
          or: [
            { field: 'expiresAt', op: 'exists', value: false },
            { field: 'expiresAt', op: 'gt', value: now },
          ],
        },
      ],
    },
    select: ['entityId'],
    limit: 10_000,
  });
  return grants.map((grant) => grant.entityId as string);
}
