import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { ApiError, validationError } from '../errors/apiError.js';
import { SIGN_IN_CODES, USERS } from '../model/collections.js';
import type { Doc } from '../store/types.js';
import { newId } from '../write/prepareWrite.js';
import { endTokens, linkTo, sendAccountMail } from './accountMail.js';
import { tokenHash } from './apiKeyToken.js';
import type { AuthContext } from './authContext.js';
import { addressProven, claimAccount } from './claimAccount.js';
import { findUserByEmail } from './users.js';

/** A mailed link or code signs in within this time. */
export const SIGN_IN_CODE_TTL_MS = 10 * 60_000;
/** Wrong codes a request allows before it is void. */
export const MAX_CODE_ATTEMPTS = 5;
/** Requests one address may make in SIGN_IN_CODE_TTL_MS; more are dropped without a word. */
export const MAX_REQUESTS_PER_ADDRESS = 3;

const INVALID = 'The sign-in link or code is invalid, used or expired';

/** The ways passwordless sign-in is on; 422 when neither is. */
export function passwordlessModes(auth: AuthContext): { link: boolean; code: boolean } {
  const { link, code } = auth.config.passwordless;
  if (!link && !code)
    throw new ApiError('UNPROCESSABLE_ENTITY', 'Passwordless sign-in is not turned on (auth.passwordless)');
  return { link, code };
}

/** A code is kept as an HMAC keyed by the server's secret and bound to its request: a leaked table tells nothing. */
function codeHash(auth: AuthContext, requestId: string, code: string): string {
  return createHmac('sha256', auth.ctx.secrets.signing).update(`${requestId}:${code}`).digest('hex');
}

/**
 * POST /auth/passwordless: mails a single-use link, a six-digit code, or both, to an account that
 * may sign in without a password (enabled, not from LDAP), ending its earlier requests. Anything
 * else (no such account, too many requests for the address) sends nothing; the caller's answer
 * is the same either way and goes out before this runs.
 */
export async function requestPasswordlessSignIn(auth: AuthContext, email: string): Promise<void> {
  const { link, code } = passwordlessModes(auth);
  const user = await findUserByEmail(auth.ctx.store, email);
  if (!user || user.disabled === true || user.authSource === 'ldap') return;
  const now = auth.ctx.now();
  const id = newId();
  const token = randomBytes(32).toString('base64url');
  const digits = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await auth.ctx.store.insert(SIGN_IN_CODES, {
    id,
    userId: user.id,
    tokenHash: tokenHash(token),
    codeHash: code ? codeHash(auth, id, digits) : null,
    attempts: 0,
    expiresAt: new Date(now.getTime() + SIGN_IN_CODE_TTL_MS).toISOString(),
    usedAt: null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  });
  // Counted after its own insert: of requests racing for one address, each sees those before it,
  // so at most MAX_REQUESTS_PER_ADDRESS of any ten minutes are mailed (one over the limit goes again).
  const recent = await auth.ctx.store.count(SIGN_IN_CODES, {
    where: {
      and: [
        { field: 'userId', op: 'eq', value: user.id },
        { field: 'createdAt', op: 'gt', value: new Date(now.getTime() - SIGN_IN_CODE_TTL_MS).toISOString() },
      ],
    },
  });
  if (recent > MAX_REQUESTS_PER_ADDRESS) {
    await auth.ctx.store.remove(SIGN_IN_CODES, id);
    return;
  }
  // A new request ends the earlier ones (ids grow with time: racing requests leave the newest).
  await endTokens(auth.ctx.store, SIGN_IN_CODES, user.id, now.toISOString(), { field: 'id', op: 'lt', value: id });
  const instructions = [
    ...(link ? [`Open this link to sign in: ${linkTo(auth, '/passwordless', token)}`] : []),
    ...(code ? [`Or enter this code where you asked to sign in: ${digits}`] : []),
  ];
  if (!link) instructions[0] = instructions[0].replace(/^Or enter/, 'Enter');
  await sendAccountMail(auth, user.email as string, 'passwordlessSignIn', {
    instructions: instructions.join('\n\n'),
    ...(link ? { token } : {}),
    ...(code ? { code: digits } : {}),
  });
}

/**
 * POST /auth/passwordless/sign-in with `{ token }` (the link) or `{ email, code }`: the account
 * the request was for, once. A wrong code counts against its request; the fifth voids it. The
 * account's address is confirmed by it. Every refusal reads the same.
 */
export async function passwordlessAccount(
  auth: AuthContext,
  proof: { token?: string; email?: string; code?: string },
): Promise<Doc> {
  const { link, code } = passwordlessModes(auth);
  const now = auth.ctx.now();
  let request: Doc | undefined;
  if (proof.token !== undefined) {
    if (!link) throw validationError({ token: 'sign-in links are not turned on' });
    [request] = await auth.ctx.store.find(SIGN_IN_CODES, {
      where: { field: 'tokenHash', op: 'eq', value: tokenHash(proof.token) },
      limit: 1,
    });
  } else {
    if (!code) throw validationError({ code: 'sign-in codes are not turned on' });
    if (proof.email === undefined || proof.code === undefined)
      throw validationError({ token: 'give the token of the link, or email and code' });
    const user = await findUserByEmail(auth.ctx.store, proof.email);
    [request] = user
      ? await auth.ctx.store.find(SIGN_IN_CODES, {
          where: {
            and: [
              { field: 'userId', op: 'eq', value: user.id },
              { field: 'usedAt', op: 'exists', value: false },
            ],
          },
          sort: [{ field: 'id', direction: 'desc' }],
          limit: 1,
        })
      : [];
    if (request && !(await tryCode(auth, request, proof.code, now.toISOString()))) request = undefined;
  }
  if (!request || request.usedAt || Date.parse(request.expiresAt as string) <= now.getTime())
    throw new ApiError('UNAUTHORIZED', INVALID);
  // Claimed only while still unused: one sign-in per request, even under concurrent calls.
  const claimed = await auth.ctx.store.update(
    SIGN_IN_CODES,
    request.id,
    { usedAt: now.toISOString(), updatedAt: now.toISOString() },
    { field: 'usedAt', op: 'exists', value: false },
  );
  const user = claimed ? await auth.ctx.store.get(USERS, request.userId as string) : null;
  if (!user || user.disabled === true || user.authSource === 'ldap') throw new ApiError('UNAUTHORIZED', INVALID);
  // The code reached the address: its owner takes over an account nobody had proved it for.
  return addressProven(user) ? user : claimAccount(auth, user);
}

function sameCode(auth: AuthContext, request: Doc, code: string): boolean {
  if (typeof request.codeHash !== 'string' || !/^\d{6}$/.test(code)) return false;
  const expected = Buffer.from(request.codeHash, 'hex');
  const given = Buffer.from(codeHash(auth, request.id, code), 'hex');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * Whether `code` is the request's. Each try is counted in the database before the code is
 * compared, so a burst of parallel guesses gets MAX_CODE_ATTEMPTS comparisons at most; the last
 * wrong one voids the request.
 */
async function tryCode(auth: AuthContext, request: Doc, code: string, now: string): Promise<boolean> {
  const after = await auth.ctx.store.increment(SIGN_IN_CODES, request.id, { attempts: 1 }, { updatedAt: now });
  if (!after || (after.attempts as number) > MAX_CODE_ATTEMPTS) return false;
  if (sameCode(auth, request, code)) return true;
  if ((after.attempts as number) >= MAX_CODE_ATTEMPTS)
    await auth.ctx.store.update(
      SIGN_IN_CODES,
      request.id,
      { usedAt: now },
      { field: 'usedAt', op: 'exists', value: false },
    );
  return false;
}
