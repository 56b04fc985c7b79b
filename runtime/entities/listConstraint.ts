import { andWhere } from '../access/accessFor.js';
import type { Caller } from '../access/caller.js';
import type { RuntimeContext } from '../context.js';
import type { EntityModel } from '../model/types.js';
import type { Where } from '../store/types.js';
import { scopeFor } from './requireAccess.js';

/**
 * The records a list shows the caller before its own filters: the view constraint (roles,
 * ownership, grants, tenancy) with archived records left out unless asked for. Lists and
 * realtime subscriptions both ask this, so a stream shows exactly what a list would.
 * Throws 401/403 when the caller may not view the entity at all.
 */
export async function listConstraint(
  ctx: RuntimeContext,
  caller: Caller,
  model: EntityModel,
  includeArchived: boolean,
): Promise<Where | undefined> {
  const viewable = await scopeFor(ctx, caller, model, 'view');
  const archived: Where | undefined =
    model.ownership === 'owned' && !includeArchived ? { field: 'archivedAt', op: 'exists', value: false } : undefined;
  return andWhere(viewable, archived);
}
