import { requireAdmin } from '../access/guards.js';
import type { Caller } from '../context/caller.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { USERS } from '../model/collections.js';
import type { Doc } from '../store/types.js';
import { sendAccountMail } from './accountMail.js';
import { tokenHash } from './apiKeyToken.js';
import type { AuthContext } from './authContext.js';
import { checkSecondFactor, mfaCipher } from './mfaChallenge.js';
import { verifyPassword } from './passwords.js';
import {
  matchingStep,
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  otpauthUri,
  qrCodeDataUrl,
} from './totp.js';

/** A session this young may enroll without giving the password again. */
export const RECENT_SIGN_IN_MS = 10 * 60_000;
/** An enrolled secret must be confirmed within this time, else enrollment starts again. */
export const ENROLLMENT_TTL_MS = 15 * 60_000;

/** Fields that hold a user's second factor; all cleared when it is turned off or reset. */
const MFA_OFF = {
  mfaEnabledAt: null,
  mfaSecret: null,
  mfaPendingSecret: null,
  mfaRecoveryCodes: null,
  mfaLastStep: null,
  mfaFailures: 0,
  mfaBlockedUntil: null,
};

/** The signed-in user behind a session; API keys cannot change how their owner signs in. */
async function sessionUser(auth: AuthContext, caller: Caller): Promise<Doc> {
  if (!caller.user) throw new ApiError('UNAUTHORIZED');
  if (caller.credential?.kind !== 'session')
    throw new ApiError('FORBIDDEN', 'Sign in with a session to change two-factor authentication; API keys cannot');
  const user = await auth.ctx.store.get(USERS, caller.user.id);
  if (!user) throw new ApiError('UNAUTHORIZED');
  return user;
}

/** Roles that auth.mfa.requiredFor makes enroll. */
export function mfaRequiredFor(auth: AuthContext, roles: readonly string[]): boolean {
  return roles.some((role) => auth.config.mfa.requiredFor.includes(role));
}

/**
 * POST /auth/mfa/enroll: a new secret waits for confirmation (an account with a password gives
 * it again unless its session is from the last ten minutes). The answer is the only place the
 * secret is ever shown.
 */
export async function enrollMfa(auth: AuthContext, caller: Caller, currentPassword: string | undefined) {
  const user = await sessionUser(auth, caller);
  if (user.mfaEnabledAt)
    throw new ApiError('CONFLICT', 'Two-factor authentication is already on; turn it off first to enroll again');
  if (user.passwordHash) {
    // A session from a sign-in of the last minutes is proof enough; an older one (perhaps taken
    // from its owner) must give the password again.
    const signedInAt = caller.credential?.kind === 'session' ? caller.credential.issuedAt : 0;
    if (currentPassword === undefined && auth.ctx.now().getTime() - signedInAt > RECENT_SIGN_IN_MS)
      throw validationError(
        { currentPassword: 'is required: this session is older than 10 minutes' },
        'Give the current password to set up two-factor authentication',
      );
    if (currentPassword !== undefined && !(await verifyPassword(user.passwordHash as string, currentPassword)))
      throw validationError({ currentPassword: 'is not the current password' });
  }
  const secret = newTotpSecret();
  const now = auth.ctx.now();
  await auth.ctx.store.update(USERS, user.id, {
    mfaPendingSecret: mfaCipher(auth).encrypt(`${now.getTime()}.${secret}`),
    updatedAt: now.toISOString(),
  });
  const uri = otpauthUri(secret, auth.config.mfa.issuer ?? auth.ctx.registry.model.app.name, user.email as string);
  return {
    secret,
    otpauthUri: uri,
    qrCode: await qrCodeDataUrl(uri),
    expiresAt: new Date(now.getTime() + ENROLLMENT_TTL_MS).toISOString(),
  };
}

/** POST /auth/mfa/confirm: a code of the enrolled secret turns it on; ten recovery codes, shown once. */
export async function confirmMfa(
  auth: AuthContext,
  caller: Caller,
  code: string,
): Promise<{ recoveryCodes: string[] }> {
  const user = await sessionUser(auth, caller);
  if (user.mfaEnabledAt) throw new ApiError('CONFLICT', 'Two-factor authentication is already on');
  const now = auth.ctx.now();
  const [since, secret] = user.mfaPendingSecret
    ? mfaCipher(auth)
        .decrypt(user.mfaPendingSecret as string)
        .split('.')
    : [];
  if (!secret || now.getTime() - Number(since) > ENROLLMENT_TTL_MS)
    throw new ApiError('UNPROCESSABLE_ENTITY', 'No enrollment is waiting: start with POST /api/v1/auth/mfa/enroll');
  const step = matchingStep(secret, code, now.getTime());
  if (step === undefined) throw validationError({ code: 'is not the current code of the authenticator' });
  const recoveryCodes = newRecoveryCodes();
  const enabled = await auth.ctx.store.update(
    USERS,
    user.id,
    {
      ...MFA_OFF,
      mfaEnabledAt: now.toISOString(),
      mfaSecret: mfaCipher(auth).encrypt(secret),
      mfaRecoveryCodes: recoveryCodes.map((recovery) => tokenHash(normalizeRecoveryCode(recovery))),
      // The code that confirmed cannot sign in as well.
      mfaLastStep: step,
      updatedAt: now.toISOString(),
    },
    { field: 'mfaEnabledAt', op: 'exists', value: false },
  );
  if (!enabled) throw new ApiError('CONFLICT', 'Two-factor authentication is already on');
  return { recoveryCodes };
}

/** POST /auth/mfa/disable: with a current code or a recovery code; not for roles that must keep it. */
export async function disableMfa(auth: AuthContext, caller: Caller, code: string): Promise<void> {
  const user = await sessionUser(auth, caller);
  if (!user.mfaEnabledAt) throw new ApiError('UNPROCESSABLE_ENTITY', 'Two-factor authentication is not on');
  if (mfaRequiredFor(auth, (user.roles as string[]) ?? []))
    throw new ApiError('UNPROCESSABLE_ENTITY', 'Your role requires two-factor authentication; it cannot be turned off');
  await checkSecondFactor(auth, user, code);
  await auth.ctx.store.update(USERS, user.id, { ...MFA_OFF, updatedAt: auth.ctx.now().toISOString() });
}

/** POST /users/{id}/mfa/reset (admins): the account signs in with its password alone again, and is told by mail. */
export async function resetMfa(auth: AuthContext, caller: Caller, id: string): Promise<Doc> {
  requireAdmin(caller);
  const user = /^[0-9a-f]{24}$/.test(id) ? await auth.ctx.store.get(USERS, id) : null;
  if (!user) throw notFound('User');
  const updated = (await auth.ctx.store.update(USERS, id, { ...MFA_OFF, updatedAt: auth.ctx.now().toISOString() }))!;
  if (user.mfaEnabledAt || user.mfaPendingSecret) {
    await sendAccountMail(auth, user.email as string, 'mfaReset', {
      admin: caller.user?.displayName ?? 'An administrator',
    });
  }
  return updated;
}
