import { hmac, signaturesMatch } from '../crypto/signedToken.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';

const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);

/** `<user_id>.<timestamp>.<signature>`: HMAC-SHA256 over `<user_id>.<timestamp>`, base64url. */
export function signSession(secret: string, userId: string, issuedAt: number): string {
  const payload = `${userId}.${issuedAt}`;
  return `${payload}.${hmac(secret, payload)}`;
}

export interface SessionClaims {
  userId: string;
  issuedAt: number;
}

/** Tokens whose signature verified lately: the limiter and authentication both check each request's. */
const VERIFIED_CACHE_SIZE = 10_000;
const verified = new Map<string, { secret: string; claims: SessionClaims }>();

/** The claims of a well-formed, correctly signed, unexpired token; undefined otherwise. */
export function verifySession(secret: string, token: string, now: number, ttlMs: number): SessionClaims | undefined {
  const claims = signedClaims(secret, token);
  if (!claims || claims.issuedAt > now + 60_000 || now - claims.issuedAt > ttlMs) return undefined;
  return claims;
}

function signedClaims(secret: string, token: string): SessionClaims | undefined {
  const known = verified.get(token);
  if (known && known.secret === secret) return { ...known.claims };
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [userId, stamp, signature] = parts;
  if (!OBJECT_ID.test(userId) || !/^\d{1,16}$/.test(stamp)) return undefined;
  if (!signaturesMatch(hmac(secret, `${userId}.${stamp}`), signature)) return undefined;
  const claims = { userId, issuedAt: Number(stamp) };
  if (verified.size >= VERIFIED_CACHE_SIZE) verified.clear();
  verified.set(token, { secret, claims: { ...claims } });
  return claims;
}
