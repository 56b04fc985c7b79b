import type { Response } from 'express';

/** The session cookie: HttpOnly, Secure, SameSite=Strict, for the whole site. */
export function setSessionCookie(res: Response, name: string, token: string, ttlMs: number): void {
  res.cookie(name, token, {
    httpOnly: true,
    secure: true,
    sameSite: 'strict',
    path: '/',
    maxAge: ttlMs,
    encode: String,
  });
}

export function clearSessionCookie(res: Response, name: string): void {
  res.clearCookie(name, { httpOnly: true, secure: true, sameSite: 'strict', path: '/' });
}
