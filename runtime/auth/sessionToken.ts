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

/** The claims of a well-formed, correctly signed, unexpired token; undefined otherwise. */
export function verifySession(secret: string, token: string, now: number, ttlMs: number): SessionClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [userId, stamp, signature] = parts;
  if (!OBJECT_ID.test(userId) || !/^\d{1,16}$/.test(stamp)) return undefined;
  if (!signaturesMatch(hmac(secret, `${userId}.${stamp}`), signature)) return undefined;
  const issuedAt = Number(stamp);
  if (issuedAt > now + 60_000 || now - issuedAt > ttlMs) return undefined;
  return { userId, issuedAt };
}
