import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { GRANTS } from '../model/collections.js';
import type { Action, EntityModel } from '../model/types.js';

export const GRANTABLE_ACTIONS: readonly Action[] = ['view', 'edit', 'delete'];

export function grantsEnabled(ctx: RuntimeContext): boolean {
  return ctx.registry.entities.has(GRANTS);
}

/**
 * Layer 4: ids of records of `entity` that live grants share with the caller for `action`. The
 * grants live when first read are remembered until the next write to grants (a stream's rules are
 * asked again every second, a user's every request), and those expired since are left out here.
 */
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
  const userId = caller.user.id;
  const read = async (): Promise<LiveGrant[]> => {
    const grants = await ctx.store.find(GRANTS, {
      where: {
        and: [
          { field: 'entity', op: 'eq', value: entity.plural },
          { field: 'grantedTo', op: 'eq', value: userId },
          { field: 'permissions', op: 'contains', value: [action] },
          {
            or: [
              { field: 'expiresAt', op: 'exists', value: false },
              { field: 'expiresAt', op: 'gt', value: ctx.now().toISOString() },
            ],
          },
        ],
      },
      select: ['entityId', 'expiresAt'],
      limit: 10_000,
    });
    return grants.map((grant) => ({
      entityId: grant.entityId as string,
      expiresAt: typeof grant.expiresAt === 'string' ? Date.parse(grant.expiresAt) : undefined,
    }));
  };
  const key = `grants\u0000${entity.plural}\u0000${userId}\u0000${action}`;
  const live = ctx.store.remember ? await ctx.store.remember(key, [GRANTS], read) : await read();
  const now = ctx.now().getTime();
  return live.filter((grant) => grant.expiresAt === undefined || grant.expiresAt > now).map((grant) => grant.entityId);
}

interface LiveGrant {
  entityId: string;
  /** Milliseconds since the epoch; undefined for a grant that does not expire. */
  expiresAt?: number;
}
