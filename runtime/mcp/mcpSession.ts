import { randomBytes } from 'node:crypto';
import type { Caller } from '../context/caller.js';
import { hmac, signaturesMatch } from '../crypto/signedToken.js';

// An MCP session id (Mcp-Session-Id) names who opened it and when, signed with the server's
// secret: any instance behind a load balancer knows it without shared state, and it is good only
// with the credential that opened it. Ended sessions (DELETE /mcp) are kept in revokedSessions.

/** How long a session lasts; the client then initializes again (its credential is checked on every request anyway). */
export const MCP_SESSION_TTL_MS = 24 * 60 * 60 * 1000;

interface SessionClaims {
  /** Who: `key:<id>` or `user:<id>`. */
  s: string;
  /** Opened at (ms). */
  t: number;
  /** A nonce: each session id is new. */
  n: string;
}

/** The credential a session belongs to: the API key, else the user. */
export function sessionSubject(caller: Caller): string | undefined {
  if (caller.credential?.kind === 'apiKey') return `key:${caller.credential.id}`;
  return caller.user ? `user:${caller.user.id}` : undefined;
}

/** A new session id for the caller. */
export function openSession(secret: string, caller: Caller, now: number): string {
  const claims: SessionClaims = { s: sessionSubject(caller)!, t: now, n: randomBytes(12).toString('base64url') };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${hmac(secret, `mcp-session.${payload}`)}`;
}

/** When the session opened, if `id` is a live session of this caller's; else undefined. */
export function sessionOpenedAt(secret: string, id: string, caller: Caller, now: number): number | undefined {
  if (id.length > 512) return undefined;
  const [payload, signature, extra] = id.split('.');
  if (!payload || !signature || extra !== undefined) return undefined;
  if (!signaturesMatch(hmac(secret, `mcp-session.${payload}`), signature)) return undefined;
  let claims: Partial<SessionClaims>;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims.t !== 'number' || claims.s !== sessionSubject(caller)) return undefined;
  if (claims.t > now + 60_000 || now - claims.t > MCP_SESSION_TTL_MS) return undefined;
  return claims.t;
}
