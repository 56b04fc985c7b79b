/** The public face of a user, as auth endpoints return it. */
export interface PublicUser {
  id: string;
  email: string;
  displayName: string;
  /** false while a registered user has not confirmed the address; true once confirmed; absent where it was never asked. */
  emailVerified?: boolean;
  /** Two-factor authentication is on: password and LDAP sign-ins ask for a code. */
  mfaEnabled?: boolean;
}

/** Who is asking: every operation takes one. Anonymous callers have no user. */
export interface Caller {
  user?: PublicUser;
  roles: readonly string[];
  /** Effective permission strings (role permissions, plus ANONYMOUS's, narrowed by an API key). */
  permissions: ReadonlySet<string>;
  isAdmin: boolean;
  /** How the caller proved who they are. */
  credential?:
    | { kind: 'session'; token: string; issuedAt: number }
    /** `mcp: false`: a key kept off the MCP server. */
    | { kind: 'apiKey'; id: string; expiresAt: string; mcp?: false };
  /** The tenant picked with the x-tenant-id header, if any (checked against membership on use). */
  requestedTenantId?: string;
  /** The client's address (the socket's, or X-Forwarded-For's from trusted proxies); none outside a request. */
  address?: string;
  /** Tenants the caller belongs to; resolved on first use by a tenant-scoped operation. */
  tenantIds?: Promise<readonly string[]>;
}

export function isAnonymous(caller: Caller): boolean {
  return caller.user === undefined;
}

/** The runtime itself (job handlers, afterCommit hooks, migration scripts): no user, every permission. */
export const SYSTEM_CALLER: Caller = Object.freeze({ roles: [], permissions: new Set<string>(), isAdmin: true });
