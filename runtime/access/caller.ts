/** The public face of a user, as auth endpoints return it. */
export interface PublicUser {
  id: string;
  email: string;
  displayName: string;
}

/** Who is asking: every operation takes one. Anonymous callers have no user. */
export interface Caller {
  user?: PublicUser;
  roles: readonly string[];
  /** Effective permission strings (role permissions, plus ANONYMOUS's, narrowed by an API key). */
  permissions: ReadonlySet<string>;
  isAdmin: boolean;
  apiKeyId?: string;
  /** Tenants the caller belongs to (tenant-scoped entities), and the one picked by x-tenant-id. */
  tenantIds?: readonly string[];
  activeTenantId?: string;
}

export function isAnonymous(caller: Caller): boolean {
  return caller.user === undefined;
}
