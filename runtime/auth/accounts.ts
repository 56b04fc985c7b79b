import { randomBytes } from 'node:crypto';
import type { Caller } from '../context/caller.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { PASSWORD_RESETS, REVOKED_SESSIONS, USERS } from '../model/collections.js';
import { EMAIL_PATTERN, normalizeEmail } from '../model/patterns.js';
import type { Doc } from '../store/types.js';
import { UniqueConflict } from '../store/types.js';
import { newId } from '../write/prepareWrite.js';
import { endTokens, linkTo, sendAccountMail } from './accountMail.js';
import { tokenHash } from './apiKeyToken.js';
import type { AuthContext } from './authContext.js';
import { addressProven, claimAccount } from './claimAccount.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import { signSession } from './sessionToken.js';
import { findUserByEmail } from './users.js';

export const RESET_TOKEN_TTL_MS = 60 * 60 * 1000;
const INVALID_LOGIN = 'Invalid email or password';

export interface NewUser {
  email: string;
  password?: string;
  displayName: string;
  roles?: string[];
  authSource?: 'local' | 'ldap' | 'oidc';
  ldapDn?: string;
  /** `<provider>|<subject>` of the OpenID identity that created the account. */
  oidcSubject?: string;
  /** false for a self-registered user: nobody proved the address yet. */
  emailVerified?: boolean;
}

/** Stores a new user; 400 for a bad email or a password the policy refuses, 409 for a taken email. */
export async function createUser(auth: AuthContext, input: NewUser): Promise<Doc> {
  const details: Record<string, string> = {};
  const email = normalizeEmail(input.email);
  if (!EMAIL_PATTERN.test(email)) details.email = 'must be an email address';
  if (input.password !== undefined) {
    const problem = passwordProblem(input.password, auth.config.passwordPolicy);
    if (problem) details.password = problem;
  }
  const displayName = input.displayName.trim();
  if (!displayName) details.displayName = 'must not be empty';
  if (Object.keys(details).length > 0) throw validationError(details);
  const now = auth.ctx.now().toISOString();
  const user: Doc = {
    id: newId(),
    email,
    displayName,
    passwordHash: input.password !== undefined ? await hashPassword(input.password) : null,
    roles: input.roles ?? ['USER'],
    authSource: input.authSource ?? 'local',
    ldapDn: input.ldapDn ?? null,
    ...(input.oidcSubject ? { oidcSubjects: [input.oidcSubject] } : {}),
    emailVerified: input.emailVerified ?? null,
    disabled: false,
    createdAt: now,
    updatedAt: now,
  };
  try {
    return await auth.ctx.store.insert(USERS, user);
  } catch (error) {
    if (error instanceof UniqueConflict)
      throw new ApiError('CONFLICT', 'An account with this email already exists', { email: 'is already registered' });
    throw error;
  }
}

/** Unknown email and wrong password answer alike, in about the same time. */
export async function loginWithPassword(auth: AuthContext, email: string, password: string): Promise<Doc> {
  const user = await findUserByEmail(auth.ctx.store, email);
  const ok = await verifyPassword(user?.passwordHash as string | undefined, password);
  if (!user || !ok || user.disabled === true) throw new ApiError('UNAUTHORIZED', INVALID_LOGIN);
  return user;
}

/** A finished sign-in (every factor passed): the last sign-in time, then a session. */
export async function signInSession(auth: AuthContext, user: Doc): Promise<string> {
  await auth.ctx.store.update(USERS, user.id, { lastLoginAt: auth.ctx.now().toISOString() });
  return issueSession(auth, user.id);
}

export function issueSession(auth: AuthContext, userId: string): string {
  return signSession(auth.ctx.secrets.signing, userId, auth.ctx.now().getTime());
}

/** Logout: this token stops working at once, everywhere. */
export async function revokeSession(auth: AuthContext, caller: Caller): Promise<void> {
  if (caller.credential?.kind !== 'session' || !caller.user)
    throw new ApiError('UNAUTHORIZED', 'Sign in with a session to sign out');
  const expiresAt = new Date(caller.credential.issuedAt + auth.config.sessionTtlMs).toISOString();
  try {
    await auth.ctx.store.insert(REVOKED_SESSIONS, {
      id: newId(),
      tokenHash: tokenHash(caller.credential.token),
      userId: caller.user.id,
      expiresAt,
      createdAt: auth.ctx.now().toISOString(),
      updatedAt: auth.ctx.now().toISOString(),
    });
  } catch (error) {
    if (!(error instanceof UniqueConflict)) throw error;
  }
  auth.ctx.notifyCredentialsChanged?.();
}

/** New password after checking the current one; every earlier session of the user ends. Returns a fresh token. */
export async function changePassword(
  auth: AuthContext,
  caller: Caller,
  current: string,
  next: string,
): Promise<string> {
  if (!caller.user) throw new ApiError('UNAUTHORIZED');
  const user = await auth.ctx.store.get(USERS, caller.user.id);
  if (!user || !(await verifyPassword(user.passwordHash as string | undefined, current))) {
    throw validationError({ currentPassword: 'is not correct' }, 'Current password is not correct');
  }
  const problem = passwordProblem(next, auth.config.passwordPolicy);
  if (problem) throw validationError({ newPassword: problem });
  await setPassword(auth, user.id, next);
  return issueSession(auth, user.id);
}

/** A new password ends every earlier session and every reset token still outstanding. */
async function setPassword(auth: AuthContext, userId: string, password: string): Promise<void> {
  const now = auth.ctx.now().toISOString();
  await auth.ctx.store.update(USERS, userId, {
    passwordHash: await hashPassword(password),
    sessionsValidAfter: now,
    updatedAt: now,
  });
  await endTokens(auth.ctx.store, PASSWORD_RESETS, userId, now);
  auth.ctx.notifyCredentialsChanged?.();
}

/** Always succeeds from the outside; a known local account gets a single-use token valid for one hour. */
export async function requestPasswordReset(auth: AuthContext, email: string): Promise<void> {
  const user = await findUserByEmail(auth.ctx.store, email);
  if (!user || user.disabled === true || user.authSource !== 'local') return;
  await mailPasswordReset(auth, user);
}

/** A single-use reset token for a local account, mailed to its address (never answered to anyone). */
export async function mailPasswordReset(auth: AuthContext, user: Doc): Promise<void> {
  const token = randomBytes(32).toString('base64url');
  const now = auth.ctx.now();
  await auth.ctx.store.insert(PASSWORD_RESETS, {
    id: newId(),
    userId: user.id,
    tokenHash: tokenHash(token),
    expiresAt: new Date(now.getTime() + RESET_TOKEN_TTL_MS).toISOString(),
    usedAt: null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  });
  await sendAccountMail(auth, user.email as string, 'passwordReset', {
    link: linkTo(auth, '/reset-password', token),
    token,
  });
}

export async function resetPassword(auth: AuthContext, token: string, newPassword: string): Promise<void> {
  const now = auth.ctx.now();
  const [reset] = await auth.ctx.store.find(PASSWORD_RESETS, {
    where: { field: 'tokenHash', op: 'eq', value: tokenHash(token) },
    limit: 1,
  });
  if (!reset || reset.usedAt || Date.parse(reset.expiresAt as string) <= now.getTime()) {
    throw validationError({ token: 'is invalid, used or expired' }, 'Reset token is invalid, used or expired');
  }
  const problem = passwordProblem(newPassword, auth.config.passwordPolicy);
  if (problem) throw validationError({ newPassword: problem });
  // Marking it used only if still unused makes the token single-use even under concurrent calls.
  const claimed = await auth.ctx.store.update(
    PASSWORD_RESETS,
    reset.id,
    { usedAt: now.toISOString() },
    { field: 'usedAt', op: 'exists', value: false },
  );
  if (!claimed)
    throw validationError({ token: 'is invalid, used or expired' }, 'Reset token is invalid, used or expired');
  // The link reached the address: its owner takes over an account nobody had proved it for.
  const user = await auth.ctx.store.get(USERS, reset.userId as string);
  if (user && !addressProven(user)) await claimAccount(auth, user);
  await setPassword(auth, reset.userId as string, newPassword);
}
