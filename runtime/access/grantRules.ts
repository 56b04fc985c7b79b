import type { RuntimeContext } from '../context.js';
import { findWritable } from '../entities/requireAccess.js';
import { ApiError, validationError } from '../http/errors.js';
import type { EntityRules } from '../entities/entityRules.js';
import type { Caller } from './caller.js';
import { GRANTS } from './grants.js';
import { tenantsOfUser } from './tenancy.js';

/**
 * A grant may be made by an admin or by whoever may edit the shared record; the record must
 * exist, the grantee must be a user, and a grant never crosses tenants (422).
 */
export async function checkGrant(ctx: RuntimeContext, caller: Caller, grant: Record<string, unknown>): Promise<void> {
  const target = ctx.registry.entities.get(String(grant.entity))?.model;
  if (!target || target.internal || target.plural === GRANTS) throw validationError({ entity: 'must be the plural of an entity that can be shared' });
  const { doc } = await findWritable(ctx, target, String(grant.entityId), caller, 'edit');
  const grantee = await ctx.store.get('users', String(grant.grantedTo));
  if (!grantee) throw validationError({ grantedTo: 'is not a user' });
  if (target.tenantScoped && typeof doc.tenantId === 'string') {
    const tenants = await tenantsOfUser(ctx, grantee.id);
    if (!tenants.includes(doc.tenantId)) throw new ApiError('UNPROCESSABLE_ENTITY', 'A grant cannot share a record outside its tenant', { grantedTo: 'is not in the record\'s tenant' });
  }
}

/** Grants are checked when made, and again when an edit would point one elsewhere. */
export const grantRules: EntityRules = {
  beforeCreate: checkGrant,
  async beforeUpdate(ctx, caller, current, values) {
    if (['entity', 'entityId', 'grantedTo'].some((key) => values[key] !== undefined && values[key] !== current[key])) {
      await checkGrant(ctx, caller, { ...current, ...values });
    }
  },
};
