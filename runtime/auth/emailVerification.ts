import { randomBytes } from 'node:crypto';
import type { Caller, PublicUser } from '../context/caller.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { EMAIL_TOKENS, USERS } from '../model/collections.js';
import { EMAIL_PATTERN, normalizeEmail } from '../model/patterns.js';
import type { Doc } from '../store/types.js';
import { UniqueConflict } from '../store/types.js';
import { newId } from '../write/prepareWrite.js';
import { endTokens, linkTo, sendAccountMail } from './accountMail.js';
import { createUser, type NewUser } from './accounts.js';
import { tokenHash } from './apiKeyToken.js';
import type { AuthContext } from './authContext.js';
import { verifyPassword } from './passwords.js';
import { findUserByEmail, publicUser } from './users.js';

export const EMAIL_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
/** A new verification mail for an address at most this often, whoever asks (no mail bombing through resend). */
export const RESEND_INTERVAL_MS = 60_000;
const INVALID_TOKEN = 'is invalid, used or expired';

/** A new single-use token of this purpose; earlier unused ones of the same purpose end. */
async function issueToken(auth: AuthContext, userId: string, purpose: 'verify' | 'change', newEmail?: string) {
  const now = auth.ctx.now();
  await endTokens(auth.ctx.store, EMAIL_TOKENS, userId, now.toISOString(), {
    field: 'purpose',
    op: 'eq',
    value: purpose,
  });
  const token = randomBytes(32).toString('base64url');
  await auth.ctx.store.insert(EMAIL_TOKENS, {
    id: newId(),
    userId,
    purpose,
    newEmail: newEmail ?? null,
    tokenHash: tokenHash(token),
    expiresAt: new Date(now.getTime() + EMAIL_TOKEN_TTL_MS).toISOString(),
    usedAt: null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  });
  return token;
}

/**
 * POST /auth/register where verification is on: the account, or for a taken address a notice to
 * its owner. The answer is the same either way (the user as registered, no session: the new user
 * signs in with the password), so registration never tells whether an address has an account.
 */
export async function registerQuietly(auth: AuthContext, input: NewUser): Promise<PublicUser> {
  try {
    const user = await createUser(auth, { ...input, emailVerified: false });
    await sendVerification(auth, user);
    return publicUser(user);
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'CONFLICT') throw error;
    const email = normalizeEmail(input.email);
    await sendAccountMail(auth, email, 'addressInUse', { email, attempt: 'register an account' });
    return { id: newId(), email, displayName: input.displayName.trim(), emailVerified: false };
  }
}

/** After registration (emailVerification optional or required): the link that confirms the address. */
export async function sendVerification(auth: AuthContext, user: Doc): Promise<void> {
  if (auth.config.emailVerification === 'off') return;
  const token = await issueToken(auth, user.id, 'verify');
  await sendAccountMail(auth, user.email as string, 'verifyEmail', {
    link: linkTo(auth, '/verify-email', token),
    token,
  });
}

/** POST /auth/resend-verification: a new link for a registered, unconfirmed address; silent otherwise. */
export async function resendVerification(auth: AuthContext, email: string): Promise<void> {
  if (auth.config.emailVerification === 'off') return;
  const user = await findUserByEmail(auth.ctx.store, email);
  if (!user || user.disabled === true || user.emailVerified !== false) return;
  const since = new Date(auth.ctx.now().getTime() - RESEND_INTERVAL_MS).toISOString();
  const recent = await auth.ctx.store.count(EMAIL_TOKENS, {
    where: {
      and: [
        { field: 'userId', op: 'eq', value: user.id },
        { field: 'purpose', op: 'eq', value: 'verify' },
        { field: 'createdAt', op: 'gt', value: since },
      ],
    },
  });
  if (recent > 0) return;
  await sendVerification(auth, user);
}

/**
 * POST /auth/verify-email: uses a token once. A verification token marks the address confirmed;
 * an email-change token moves the account to the new address (409 if another account took it
 * meanwhile), which is confirmed by the same act. Returns the user.
 */
export async function verifyEmail(auth: AuthContext, token: string): Promise<Doc> {
  const now = auth.ctx.now();
  const [found] = await auth.ctx.store.find(EMAIL_TOKENS, {
    where: { field: 'tokenHash', op: 'eq', value: tokenHash(token) },
    limit: 1,
  });
  if (!found || found.usedAt || Date.parse(found.expiresAt as string) <= now.getTime())
    throw validationError({ token: INVALID_TOKEN }, 'Token is invalid, used or expired');
  const user = await auth.ctx.store.get(USERS, found.userId as string);
  if (!user || user.disabled === true)
    throw validationError({ token: INVALID_TOKEN }, 'Token is invalid, used or expired');
  const changes: Doc = { id: user.id, emailVerified: true, updatedAt: now.toISOString() };
  if (found.purpose === 'change') {
    const taken = await findUserByEmail(auth.ctx.store, found.newEmail as string);
    if (taken && taken.id !== user.id)
      throw new ApiError('CONFLICT', 'An account with this email already exists', { email: 'is already registered' });
    changes.email = found.newEmail;
  }
  // Used only if still unused: single-use even under concurrent calls.
  const claimed = await auth.ctx.store.update(
    EMAIL_TOKENS,
    found.id,
    { usedAt: now.toISOString(), updatedAt: now.toISOString() },
    { field: 'usedAt', op: 'exists', value: false },
  );
  if (!claimed) throw validationError({ token: INVALID_TOKEN }, 'Token is invalid, used or expired');
  const { id, ...set } = changes;
  try {
    const updated = await auth.ctx.store.update(USERS, id, set);
    return updated ?? user;
  } catch (error) {
    if (error instanceof UniqueConflict)
      throw new ApiError('CONFLICT', 'An account with this email already exists', { email: 'is already registered' });
    throw error;
  }
}

/**
 * POST /auth/change-email: the current password proves the owner; the new address gets a link
 * that makes the change, the old one a notice. Nothing changes until the link is used. The
 * answer is the same whether or not the new address is taken: a taken one's owner is told of
 * the attempt instead (and an address taken meanwhile is refused at confirmation).
 */
export async function requestEmailChange(
  auth: AuthContext,
  caller: Caller,
  newEmail: string,
  currentPassword: string,
): Promise<void> {
  if (!caller.user) throw new ApiError('UNAUTHORIZED');
  if (caller.credential?.kind !== 'session')
    throw new ApiError('FORBIDDEN', 'Sign in with a session to change the email address; API keys cannot');
  const user = await auth.ctx.store.get(USERS, caller.user.id);
  if (!user) throw new ApiError('UNAUTHORIZED');
  if (user.authSource !== 'local')
    throw new ApiError('UNPROCESSABLE_ENTITY', 'This account signs in through LDAP; its address comes from there');
  if (!(await verifyPassword(user.passwordHash as string | undefined, currentPassword)))
    throw validationError({ currentPassword: 'is not the current password' });
  const email = normalizeEmail(newEmail);
  if (!EMAIL_PATTERN.test(email)) throw validationError({ newEmail: 'must be an email address' });
  if (email === user.email) throw validationError({ newEmail: 'is the current address' });
  // The answer is the same either way; the owner of a taken address hears of the attempt instead.
  if (await findUserByEmail(auth.ctx.store, email)) {
    await sendAccountMail(auth, email, 'addressInUse', { email, attempt: 'move another account to it' });
    return;
  }
  const token = await issueToken(auth, user.id, 'change', email);
  await sendAccountMail(auth, email, 'confirmEmailChange', {
    link: linkTo(auth, '/verify-email', token),
    token,
    newEmail: email,
  });
  await sendAccountMail(auth, user.email as string, 'emailChangeNotice', { newEmail: email });
}
