import type { Request, Response } from 'express';
import type { SecureCookies } from '../config/runtimeConfig.js';

export interface SessionCookie {
  name: string;
  /**
   * Sets the cookie: HttpOnly, SameSite=Strict, for the whole site, Secure as the policy says.
   * Answers a warning when the browser will not keep it: Secure on a plain-HTTP request to a
   * host that is not loopback. The token in the answer still works as a Bearer token.
   */
  set(req: Request, res: Response, token: string): string | undefined;
  clear(req: Request, res: Response): void;
  /** Whether cookies set in answer to this request carry `Secure` (the OpenID flow cookie too). */
  secure(req: Request): boolean;
}

const LOOPBACK = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[?::1\]?)$/i;

export function sessionCookie(
  name: string,
  ttlMs: number,
  policy: SecureCookies,
  publicUrl: string | undefined,
): SessionCookie {
  const publicHttps = publicUrl?.startsWith('https://') === true;
  const secure = (req: Request) =>
    policy === 'always' || (policy === 'auto' && (req.secure || publicHttps || LOOPBACK.test(req.hostname ?? '')));
  const options = (req: Request) => ({ httpOnly: true, secure: secure(req), sameSite: 'strict' as const, path: '/' });
  return {
    name,
    set(req, res, token) {
      const flags = options(req);
      res.cookie(name, token, { ...flags, maxAge: ttlMs, encode: String });
      if (!flags.secure || req.secure || LOOPBACK.test(req.hostname ?? '')) return undefined;
      return policy === 'always'
        ? 'This request came over plain HTTP and the session cookie is Secure (server.cookies.secure: always), so the browser will not keep it: use HTTPS, or set server.cookies.secure to auto. The token in this answer works as a Bearer token.'
        : 'This request came over plain HTTP but the public URL is https, so the cookie is Secure and the browser will not keep it: reach the server over HTTPS, and if a proxy terminates TLS, name it in server.trustProxy so its X-Forwarded-Proto is believed. The token in this answer works as a Bearer token.';
    },
    clear(req, res) {
      res.clearCookie(name, options(req));
    },
    secure,
  };
}
