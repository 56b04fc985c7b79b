import { ApiError } from '../errors/apiError.js';
import { USERS } from '../model/collections.js';
import type { Doc } from '../store/types.js';
import { createUser } from './accounts.js';
import type { AuthContext } from './authContext.js';
import type { OidcIdentity } from './oidc.js';
import { findUserByEmail } from './users.js';

const REFUSED = 'This account cannot sign in';

/**
 * The account an OpenID identity signs in to: the one already linked to it; else the account
 * with its (provider-verified) email, which it is linked to; else a new account with the
 * provider's roles. An account whose address is still waiting for its own confirmation is not
 * linked: whoever registered it may not own the address (docs/guide/identity.md, "OpenID Connect").
 */
export async function oidcAccount(auth: AuthContext, identity: OidcIdentity): Promise<Doc> {
  const { store } = auth.ctx;
  const subject = `${identity.provider.name}|${identity.subject}`;
  const [linked] = await store.find(USERS, {
    where: { field: 'oidcSubjects', op: 'contains', value: subject },
    limit: 1,
  });
  if (linked) {
    if (linked.disabled === true) throw new ApiError('UNAUTHORIZED', REFUSED);
    return linked;
  }
  const existing = await findUserByEmail(store, identity.email);
  if (!existing)
    return createUser(auth, {
      email: identity.email,
      displayName: identity.name ?? identity.email.slice(0, identity.email.indexOf('@')),
      roles: identity.provider.roles,
      authSource: 'oidc',
      oidcSubject: subject,
      emailVerified: true,
    });
  if (existing.disabled === true) throw new ApiError('UNAUTHORIZED', REFUSED);
  if (existing.emailVerified === false)
    throw new ApiError(
      'CONFLICT',
      `An account with ${identity.email} waits for its address to be confirmed; use the link mailed to it first, then sign in with ${identity.provider.label}`,
      { email: 'belongs to an account whose address is not confirmed yet' },
    );
  const subjects = [...((existing.oidcSubjects as string[] | undefined) ?? []), subject];
  return (await store.update(USERS, existing.id, {
    oidcSubjects: subjects,
    updatedAt: auth.ctx.now().toISOString(),
  }))!;
}
