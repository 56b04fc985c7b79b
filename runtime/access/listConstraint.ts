import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { EntityModel } from '../model/types.js';
import type { TrashView } from '../query/listQuery.js';
import { NOT_TRASHED, TRASHED } from '../store/trashStore.js';
import type { Where } from '../store/types.js';
import { andWhere } from './accessFor.js';
import { scopeFor } from './requireAccess.js';

const NOT_ARCHIVED: Where = { field: 'archivedAt', op: 'exists', value: false };

/**
 * The records a list shows the caller before its own filters: the view constraint (roles,
 * ownership, grants, tenancy) with archived records left out unless asked for, and trashed
 * ones too. Lists and realtime subscriptions both ask this, so a stream shows exactly what a
 * list would. `trash` shows the trash (`only`) or adds it (`include`): the trashed records the
 * caller may both view and delete, archived or not. Throws 401/403 when the caller may not view
 * the entity at all, or may not delete any of it when `trash` is asked for.
 */
export async function listConstraint(
  ctx: RuntimeContext,
  caller: Caller,
  model: EntityModel,
  includeArchived: boolean,
  trash?: TrashView,
): Promise<Where | undefined> {
  const viewable = await scopeFor(ctx, caller, model, 'view');
  const archived = model.ownership === 'owned' && !includeArchived ? NOT_ARCHIVED : undefined;
  if (!model.trash) return andWhere(viewable, archived);
  const live = andWhere(NOT_TRASHED, archived)!;
  if (!trash) return andWhere(viewable, live);
  const trashed = andWhere(TRASHED, await scopeFor(ctx, caller, model, 'delete'))!;
  return andWhere(viewable, trash === 'only' ? trashed : { or: [live, trashed] });
}
