import { ApiError } from '../errors/apiError.js';
import { USERS } from '../model/collections.js';
import type { Doc } from '../store/types.js';
import { createUser } from './accounts.js';
import type { AuthContext } from './authContext.js';
import type { LdapIdentity } from './ldap.js';
import { findUserByEmail } from './users.js';

/**
 * The account an LDAP identity signs in to: the one linked to its DN, else an LDAP-sourced
 * account with its email that has no DN yet (linked by an admin), else a new LDAP account.
 * Never a password account, never an account linked to another DN.
 */
export async function ldapAccount(auth: AuthContext, identity: LdapIdentity, loginName: string): Promise<Doc> {
  const { store } = auth.ctx;
  const [linked] = await store.find(USERS, { where: { field: 'ldapDn', op: 'eq', value: identity.dn }, limit: 1 });
  if (linked) return linked;
  const email = identity.email ?? (loginName.includes('@') ? loginName : `${loginName}@ldap.invalid`);
  const existing = await findUserByEmail(store, email);
  if (!existing)
    return createUser(auth, {
      email,
      displayName: identity.displayName ?? loginName,
      authSource: 'ldap',
      ldapDn: identity.dn,
    });
  if (existing.authSource !== 'ldap' || existing.ldapDn) {
    throw new ApiError(
      'CONFLICT',
      'An account with this email exists and is not linked to this LDAP identity; an administrator can link it',
      { email: 'belongs to an account not linked to this LDAP identity' },
    );
  }
  return (await store.update(USERS, existing.id, { ldapDn: identity.dn, updatedAt: auth.ctx.now().toISOString() }))!;
}
