import { API_KEYS, PASSWORD_RESETS, USERS } from '../model/collections.js';
import type { Doc } from '../store/types.js';
import { endTokens } from './accountMail.js';
import type { AuthContext } from './authContext.js';

/** Whether someone proved they own the account's address (by mail, a provider, LDAP or an administrator). */
export const addressProven = (user: Doc | { emailVerified?: unknown }) => user.emailVerified !== false;

/**
 * The owner of an address proved it (an OpenID or OAuth2 provider vouched for it, a mailed reset
 * link or sign-in code was used) on an account whose address nobody had proved. Whoever
 * registered that account may not have been the owner: every way in they could have kept goes
 * (the password, every session, API keys and reset links), and the address counts as proven from
 * now on. Two-factor authentication stays: proof of the mailbox alone must never turn it off (an
 * administrator resets it). `set` is written in the same update.
 */
export async function claimAccount(auth: AuthContext, user: Doc, set: Record<string, unknown> = {}): Promise<Doc> {
  const now = auth.ctx.now().toISOString();
  const claimed = await auth.ctx.store.update(USERS, user.id, {
    passwordHash: null,
    sessionsValidAfter: now,
    ...set,
    emailVerified: true,
    updatedAt: now,
  });
  const keys = await auth.ctx.store.find(API_KEYS, {
    where: {
      and: [
        { field: 'ownerId', op: 'eq', value: user.id },
        { field: 'revokedAt', op: 'exists', value: false },
      ],
    },
    select: ['id'],
    limit: 1000,
  });
  for (const { id } of keys) await auth.ctx.store.update(API_KEYS, id, { revokedAt: now, updatedAt: now });
  await endTokens(auth.ctx.store, PASSWORD_RESETS, user.id, now);
  auth.ctx.notifyCredentialsChanged?.();
  auth.ctx.logger.warn(
    { userId: user.id },
    'an account whose address nobody had proved was claimed by the owner of the address: its password, sessions and API keys ended',
  );
  return claimed ?? user;
}
