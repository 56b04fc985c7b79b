import { FieldCipher } from '../crypto/fieldCipher.js';
import { hmac, signaturesMatch } from '../crypto/signedToken.js';
import { ApiError } from '../errors/apiError.js';
import { USERS } from '../model/collections.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import type { Doc } from '../store/types.js';
import { tokenHash } from './apiKeyToken.js';
import type { AuthContext } from './authContext.js';
import { matchingStep, normalizeRecoveryCode } from './totp.js';

/** The second step of a sign-in must follow the first within this time. */
export const MFA_CHALLENGE_TTL_MS = 5 * 60_000;
/** Wrong codes in a row before the account's second step is locked for MFA_BLOCK_MS. */
export const MFA_MAX_FAILURES = 5;
export const MFA_BLOCK_MS = 15 * 60_000;

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);
const EXPIRED = 'This sign-in has expired or is not valid; sign in again';

/** Secrets at rest are sealed with a key of their own, derived from the app's. */
export function mfaCipher(auth: AuthContext): FieldCipher {
  return new FieldCipher(`mfa:${auth.ctx.secrets.encryption ?? auth.ctx.secrets.signing}`);
}

/** What login answers (202) for an account with two-factor authentication on: no session yet. */
export interface MfaChallenge {
  mfaRequired: true;
  mfaToken: string;
  expiresAt: string;
  methods: ['totp', 'recoveryCode'];
}

/** `mfa.<userId>.<issuedAt>.<signature>`: proves the first factor; four parts, so it never passes as a session. */
export function issueMfaChallenge(auth: AuthContext, user: Doc): MfaChallenge {
  const issuedAt = auth.ctx.now().getTime();
  const payload = `mfa.${user.id}.${issuedAt}`;
  return {
    mfaRequired: true,
    mfaToken: `${payload}.${hmac(auth.ctx.secrets.signing, payload)}`,
    expiresAt: new Date(issuedAt + MFA_CHALLENGE_TTL_MS).toISOString(),
    methods: ['totp', 'recoveryCode'],
  };
}

/** POST /auth/mfa/verify: the challenge and a code (or a recovery code) make a sign-in; returns the user. */
export async function completeMfaChallenge(auth: AuthContext, mfaToken: string, code: string): Promise<Doc> {
  const [kind, userId, stamp, signature, extra] = mfaToken.split('.');
  const now = auth.ctx.now().getTime();
  if (kind !== 'mfa' || extra !== undefined || !OBJECT_ID.test(userId ?? '') || !/^\d{1,16}$/.test(stamp ?? ''))
    throw new ApiError('UNAUTHORIZED', EXPIRED);
  if (!signaturesMatch(hmac(auth.ctx.secrets.signing, `mfa.${userId}.${stamp}`), signature ?? ''))
    throw new ApiError('UNAUTHORIZED', EXPIRED);
  const issuedAt = Number(stamp);
  if (now - issuedAt > MFA_CHALLENGE_TTL_MS || issuedAt > now + 60_000) throw new ApiError('UNAUTHORIZED', EXPIRED);
  const user = await auth.ctx.store.get(USERS, userId);
  // Disabled, reset or a new password since the first step: that step no longer counts.
  const validAfter = typeof user?.sessionsValidAfter === 'string' ? Date.parse(user.sessionsValidAfter) : 0;
  if (!user || user.disabled === true || !user.mfaEnabledAt || issuedAt < validAfter)
    throw new ApiError('UNAUTHORIZED', EXPIRED);
  await checkSecondFactor(auth, user, code);
  return user;
}

/**
 * A code of the user's authenticator (a step later than the last one accepted, so no code works
 * twice) or an unused recovery code, each claimed by a conditional update. Every try takes one of
 * MFA_MAX_FAILURES slots first, by one atomic conditional increment, so however many tries arrive
 * at once, at most that many codes are ever checked; a right code frees the slots, and the try
 * that fills the last one with a wrong code locks the account's second step for a while (429).
 */
export async function checkSecondFactor(auth: AuthContext, user: Doc, code: string): Promise<void> {
  const { store } = auth.ctx;
  const now = auth.ctx.now();
  const stamp = now.toISOString();
  const notLocked = {
    or: [
      { field: 'mfaBlockedUntil', op: 'exists' as const, value: false },
      { field: 'mfaBlockedUntil', op: 'lte' as const, value: stamp },
    ],
  };
  const slot = await store.increment(USERS, user.id, { mfaFailures: 1 }, undefined, {
    and: [
      notLocked,
      {
        or: [
          { field: 'mfaFailures', op: 'exists', value: false },
          { field: 'mfaFailures', op: 'lt', value: MFA_MAX_FAILURES },
        ],
      },
    ],
  });
  if (!slot) throw lockedError(await store.get(USERS, user.id), now);
  // The last slot locks before its code is checked (and unlocks if the code is right), so a try
  // that dies half way leaves at worst an ordinary lock, never slots that stay taken.
  const lockedUntil = new Date(now.getTime() + MFA_BLOCK_MS).toISOString();
  const last = (slot.mfaFailures as number) >= MFA_MAX_FAILURES;
  if (last)
    await store.update(
      USERS,
      user.id,
      { mfaFailures: 0, mfaBlockedUntil: lockedUntil },
      { field: 'mfaFailures', op: 'gte', value: MFA_MAX_FAILURES },
    );
  if (await claimCode(auth, slot, code.trim())) {
    if (last)
      await store.update(
        USERS,
        user.id,
        { mfaBlockedUntil: null },
        { field: 'mfaBlockedUntil', op: 'eq', value: lockedUntil },
      );
    return;
  }
  throw new ApiError('UNAUTHORIZED', 'The code is not valid', {
    code: 'is not a current authenticator code or an unused recovery code',
  });
}

/** 429 with the time left; a second step whose slots are all taken by tries in flight waits a second. */
function lockedError(user: Doc | null, now: Date): ApiError {
  const blockedUntil = typeof user?.mfaBlockedUntil === 'string' ? Date.parse(user.mfaBlockedUntil) : 0;
  const locked = new ApiError('RATE_LIMITED', 'Too many wrong codes; try again later');
  locked.retryAfterSeconds = Math.max(1, Math.ceil((blockedUntil - now.getTime()) / 1000));
  return locked;
}

async function claimCode(auth: AuthContext, user: Doc, code: string): Promise<boolean> {
  const { store } = auth.ctx;
  if (/^\d{6}$/.test(code)) {
    const secret = mfaCipher(auth).decrypt(user.mfaSecret as string);
    const step = matchingStep(secret, code, auth.ctx.now().getTime());
    if (step === undefined) return false;
    const claimed = await store.update(
      USERS,
      user.id,
      { mfaLastStep: step, mfaFailures: 0 },
      {
        or: [
          { field: 'mfaLastStep', op: 'exists', value: false },
          { field: 'mfaLastStep', op: 'lt', value: step },
        ],
      },
    );
    return claimed !== null;
  }
  const normalized = normalizeRecoveryCode(code);
  if (!/^[a-z0-9]{10}$/.test(normalized)) return false;
  const hash = tokenHash(normalized);
  let current: Doc | null = user;
  // Claimed only while the list is as read (every code still there): a code works once, and two
  // codes used at the same moment cannot put each other back. A lost race reads again.
  for (let attempt = 0; attempt < 3 && current; attempt++) {
    const codes = (current.mfaRecoveryCodes as string[] | undefined) ?? [];
    if (!codes.includes(hash)) return false;
    const claimed = await store.update(
      USERS,
      user.id,
      { mfaRecoveryCodes: codes.filter((known) => known !== hash), mfaFailures: 0 },
      { and: codes.map((known) => ({ field: 'mfaRecoveryCodes', op: 'contains' as const, value: known })) },
    );
    if (claimed) return true;
    current = await store.get(USERS, user.id);
  }
  return false;
}
