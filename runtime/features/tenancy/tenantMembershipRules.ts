import type { EntityRules } from '../../context/entityRules.js';
import { ApiError } from '../../errors/apiError.js';

const idsOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/**
 * Membership of a tenant decides what its members see, so only the tenant's owner or an
 * administrator changes it; a member who may edit the record can only take itself out.
 */
export const tenantMembershipRules: EntityRules = {
  async beforeUpdate(ctx, caller, current, values) {
    const field = ctx.registry.model.tenancy?.membersField;
    if (!field || values[field] === undefined || caller.isAdmin) return;
    const before = new Set(idsOf(current[field]));
    const after = new Set(idsOf(values[field]));
    const added = [...after].filter((id) => !before.has(id));
    const removed = [...before].filter((id) => !after.has(id));
    if (added.length === 0 && removed.length === 0) return;
    const me = caller.user?.id;
    if (me !== undefined && current.ownerId === me) return;
    if (added.length === 0 && removed.length === 1 && removed[0] === me) return;
    throw new ApiError('FORBIDDEN', `Only the owner of this tenant or an administrator changes its ${field}`, {
      [field]: "may be changed only by the tenant's owner or an administrator (a member may remove only itself)",
    });
  },
};
