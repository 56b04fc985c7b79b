import { andWhere } from '../../access/accessFor.js';
import { findVisible, roleScope } from '../../access/requireAccess.js';
import { tenantsOfUser, tenantWhere } from '../../access/tenancy.js';
import type { Caller } from '../../context/caller.js';
import type { EntityRules } from '../../context/entityRules.js';
import type { RuntimeContext } from '../../context/runtimeContext.js';
import { ApiError, validationError } from '../../errors/apiError.js';
import { GRANTS, USERS } from '../../model/collections.js';
import type { Action, EntityModel } from '../../model/types.js';

/**
 * A grant may be made by an admin or by whoever may edit the shared record by role, and hands
 * out only actions the granter holds on that record by role: a grant never passes on what
 * another grant gave (no widening, no re-sharing). The record must exist, the grantee must be a
 * user, and a grant never crosses tenants (422).
 */
export async function checkGrant(ctx: RuntimeContext, caller: Caller, grant: Record<string, unknown>): Promise<void> {
  const target = ctx.registry.entities.get(String(grant.entity))?.model;
  if (!target || target.internal || target.plural === GRANTS)
    throw validationError({ entity: 'must be the plural of an entity that can be shared' });
  const doc = await findVisible(ctx, target, String(grant.entityId), caller);
  if (!(await holdsByRole(ctx, caller, target, doc.id, 'edit'))) {
    throw new ApiError('FORBIDDEN', 'Only someone whose role may edit this record can share it');
  }
  const actions = Array.isArray(grant.permissions) ? (grant.permissions as Action[]) : [];
  for (const action of actions) {
    if (!(await holdsByRole(ctx, caller, target, doc.id, action))) {
      throw new ApiError('FORBIDDEN', `You may not grant ${action}: your role does not allow it on this record`, {
        permissions: `${action} is more than your role allows on this record`,
      });
    }
  }
  const grantee = await ctx.store.get(USERS, String(grant.grantedTo));
  if (!grantee) throw validationError({ grantedTo: 'is not a user' });
  if (target.tenantScoped && typeof doc.tenantId === 'string') {
    const tenants = await tenantsOfUser(ctx, grantee.id);
    if (!tenants.includes(doc.tenantId))
      throw new ApiError('UNPROCESSABLE_ENTITY', 'A grant cannot share a record outside its tenant', {
        grantedTo: "is not in the record's tenant",
      });
  }
}

/** Whether the caller's role permissions (not grants) reach this record for `action`, within the caller's tenants. */
async function holdsByRole(
  ctx: RuntimeContext,
  caller: Caller,
  target: EntityModel,
  id: string,
  action: Action,
): Promise<boolean> {
  if (caller.isAdmin) return true;
  const byRole = await roleScope(ctx, caller, target, action);
  if (byRole === null) return false;
  return (await ctx.store.get(target.plural, id, andWhere(byRole, await tenantWhere(ctx, caller, target)))) !== null;
}

/** Grants are checked when made, and again when an edit would point, widen or lengthen one. */
export const grantRules: EntityRules = {
  beforeCreate: checkGrant,
  async beforeUpdate(ctx, caller, current, values) {
    const changed = (key: string) =>
      values[key] !== undefined && JSON.stringify(values[key]) !== JSON.stringify(current[key]);
    const shortened =
      typeof values.expiresAt === 'string' &&
      typeof current.expiresAt === 'string' &&
      values.expiresAt < current.expiresAt;
    if (['entity', 'entityId', 'grantedTo', 'permissions'].some(changed) || (changed('expiresAt') && !shortened)) {
      await checkGrant(ctx, caller, { ...current, ...values });
    }
  },
};
