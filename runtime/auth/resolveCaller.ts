import { ACCOUNT_PERMISSIONS } from '../access/accountPermissions.js';
import { SYSTEM_ADMIN } from '../access/parsePermission.js';
import type { RoleTable } from '../access/roleTable.js';
import type { Caller } from '../context/caller.js';
import type { Doc } from '../store/types.js';
import { publicUser } from './users.js';

/** A signed-in user as a caller: the union of their roles' permissions, and the account's own. */
export async function callerForUser(user: Doc, roles: RoleTable): Promise<Caller> {
  const keys = Array.isArray(user.roles) ? (user.roles as string[]) : [];
  const permissions = withAccountPermissions(await roles.permissionsOf(keys));
  return {
    user: publicUser(user),
    roles: keys,
    permissions,
    isAdmin: permissions.has(SYSTEM_ADMIN),
  };
}

/** Someone who is not signed in: the ANONYMOUS role. */
export async function anonymousCaller(roles: RoleTable): Promise<Caller> {
  return { roles: ['ANONYMOUS'], permissions: await roles.permissionsOf([]), isAdmin: false };
}

/** Role sets are cached per combination of roles; so is each one with the account permissions added (no set built per request). */
const withAccount = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

function withAccountPermissions(rolePermissions: ReadonlySet<string>): ReadonlySet<string> {
  let permissions = withAccount.get(rolePermissions);
  if (!permissions) {
    permissions = new Set([...rolePermissions, ...ACCOUNT_PERMISSIONS]);
    withAccount.set(rolePermissions, permissions);
  }
  return permissions;
}
