import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError } from '../errors/apiError.js';
import type { EntityModel } from '../model/types.js';
import type { Where } from '../store/types.js';

/** The tenants whose member array holds a user. */
export async function tenantsOfUser(ctx: RuntimeContext, userId: string): Promise<string[]> {
  const tenancy = ctx.registry.model.tenancy;
  if (!tenancy) return [];
  const docs = await ctx.store.find(tenancy.entity, {
    where: { field: tenancy.membersField, op: 'contains', value: [userId] },
    select: ['id'],
  });
  return docs.map((doc) => doc.id);
}

/** The tenants (ids of the tenancy entity) whose member array holds the caller; once per request. */
export function tenantsOf(ctx: RuntimeContext, caller: Caller): Promise<readonly string[]> {
  const tenancy = ctx.registry.model.tenancy;
  if (!tenancy || !caller.user) return Promise.resolve([]);
  caller.tenantIds ??= tenantsOfUser(ctx, caller.user.id);
  return caller.tenantIds;
}

/** Layer 3: records of tenant-scoped entities only from the caller's tenants (x-tenant-id narrows to one). */
export async function tenantWhere(
  ctx: RuntimeContext,
  caller: Caller,
  entity: EntityModel,
): Promise<Where | undefined> {
  if (!entity.tenantScoped) return undefined;
  const requested = caller.requestedTenantId;
  if (caller.isAdmin) return requested ? { field: 'tenantId', op: 'eq', value: requested } : undefined;
  const tenants = await tenantsOf(ctx, caller);
  if (requested !== undefined) {
    if (!tenants.includes(requested))
      throw new ApiError('FORBIDDEN', 'You are not a member of the tenant named by x-tenant-id');
    return { field: 'tenantId', op: 'eq', value: requested };
  }
  return { field: 'tenantId', op: 'in', value: [...tenants] };
}

/** The tenant a new record of a tenant-scoped entity belongs to. */
export async function tenantForCreate(ctx: RuntimeContext, caller: Caller): Promise<string | null> {
  const requested = caller.requestedTenantId;
  if (caller.isAdmin) return requested ?? null;
  const tenants = await tenantsOf(ctx, caller);
  if (requested !== undefined) {
    if (!tenants.includes(requested))
      throw new ApiError('FORBIDDEN', 'You are not a member of the tenant named by x-tenant-id');
    return requested;
  }
  if (tenants.length === 0)
    throw new ApiError('UNPROCESSABLE_ENTITY', 'You belong to no tenant, so you cannot create tenant records');
  if (tenants.length > 1) {
    const choices = await describeTenants(ctx, tenants);
    throw new ApiError(
      'VALIDATION_ERROR',
      `You belong to several tenants: name one with the x-tenant-id header (${choices})`,
      {
        'x-tenant-id': `is required: one of ${choices}`,
      },
    );
  }
  return tenants[0];
}

const LISTED_TENANTS = 20;
/** Tenants /auth/me lists at most (a member of more picks the others by id). */
export const MAX_LISTED_TENANTS = 200;

/** The tenants as `{ id, label }`, the label from the tenancy entity's name, title or label field. */
export async function labelledTenants(
  ctx: RuntimeContext,
  ids: readonly string[],
): Promise<{ id: string; label: string | null }[]> {
  const tenancy = ctx.registry.model.tenancy;
  if (!tenancy || ids.length === 0) return [];
  const model = ctx.registry.entities.get(tenancy.entity)?.model;
  const label = model?.fields.find((f) => ['name', 'title', 'label'].includes(f.name) && !f.hidden)?.name;
  const docs = await ctx.store.find(tenancy.entity, {
    where: { field: 'id', op: 'in', value: [...ids] },
    ...(label ? { select: [label] } : {}),
  });
  const names = new Map(docs.map((doc) => [doc.id, label ? doc[label] : undefined]));
  return ids.map((id) => {
    const name = names.get(id);
    return { id, label: typeof name === 'string' ? name : null };
  });
}

/** `id (name), id (name)`, at most LISTED_TENANTS of them, for an error that names the choice. */
async function describeTenants(ctx: RuntimeContext, ids: readonly string[]): Promise<string> {
  const listed = (await labelledTenants(ctx, ids.slice(0, LISTED_TENANTS)))
    .map(({ id, label }) => (label ? `${id} (${label})` : id))
    .join(', ');
  return ids.length > LISTED_TENANTS ? `${listed}, and ${ids.length - LISTED_TENANTS} more` : listed;
}
