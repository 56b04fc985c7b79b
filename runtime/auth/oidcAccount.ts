import { ApiError } from '../errors/apiError.js';
import { USERS } from '../model/collections.js';
import type { Doc } from '../store/types.js';
import { createUser } from './accounts.js';
import type { AuthContext } from './authContext.js';
import { addressProven, claimAccount } from './claimAccount.js';
import type { OidcIdentity } from './oidc.js';
import { findUserByEmail } from './users.js';

const REFUSED = 'This account cannot sign in';

/**
 * The account an OpenID identity signs in to: the one already linked to it; else the account
 * with its (provider-verified) email, which it is linked to; else a new account with the
 * provider's roles. An account whose address nobody had proved (registered, never confirmed) is
 * claimed as it is linked: whoever registered it may not own the address, so its password,
 * sessions, two-factor authentication and API keys end (docs/guide/identity.md, "OpenID Connect").
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
  // Only the provider's subject stays linked: one an earlier registrant linked would keep a way in.
  if (!addressProven(existing)) return claimAccount(auth, existing, { oidcSubjects: [subject] });
  const subjects = [...((existing.oidcSubjects as string[] | undefined) ?? []), subject];
  return (await store.update(USERS, existing.id, {
    oidcSubjects: subjects,
    updatedAt: auth.ctx.now().toISOString(),
  }))!;
}
