import { type Response, Router } from 'express';
import { requireUser } from '../access/guards.js';
import { signInSession } from '../auth/accounts.js';
import type { AuthContext } from '../auth/authContext.js';
import { confirmMfa, disableMfa, enrollMfa } from '../auth/mfa.js';
import { completeMfaChallenge } from '../auth/mfaChallenge.js';
import { setSessionCookie } from '../auth/sessionCookie.js';
import { publicUser } from '../auth/users.js';
import type { Doc } from '../store/types.js';
import { markSecretAnswer } from './idempotency.js';
import { readBody } from './readBody.js';

/** A session for a user who passed every factor, as login answers it (cookie and token). */
export async function answerSignIn(auth: AuthContext, res: Response, user: Doc, status: number): Promise<void> {
  const token = await signInSession(auth, user);
  setSessionCookie(res, auth.cookieName, token, auth.config.sessionTtlMs);
  markSecretAnswer(res);
  res.status(status).json({ user: publicUser(user), token });
}

const CODE = { type: 'string', required: true, min: 1, max: 64 } as const;

/** /api/v1/auth/mfa: enroll, confirm, verify (the second step of a sign-in), disable. Bare bodies. */
export function mfaRoutes(auth: AuthContext): Router {
  const router = Router();

  router.post('/mfa/enroll', async (req, res) => {
    requireUser(req.caller);
    const body = readBody(req.body ?? {}, { currentPassword: { type: 'string', max: 1024 } });
    const enrollment = await enrollMfa(auth, req.caller, body.currentPassword as string | undefined);
    markSecretAnswer(res);
    res.json(enrollment);
  });

  router.post('/mfa/confirm', async (req, res) => {
    requireUser(req.caller);
    const body = readBody(req.body, { code: CODE });
    const { recoveryCodes } = await confirmMfa(auth, req.caller, body.code as string);
    markSecretAnswer(res);
    res.json({ success: true, recoveryCodes });
  });

  router.post('/mfa/verify', async (req, res) => {
    const body = readBody(req.body, { mfaToken: { type: 'string', required: true, max: 200 }, code: CODE });
    const user = await completeMfaChallenge(auth, body.mfaToken as string, body.code as string);
    await answerSignIn(auth, res, user, 200);
  });

  router.post('/mfa/disable', async (req, res) => {
    requireUser(req.caller);
    const body = readBody(req.body, { code: CODE });
    await disableMfa(auth, req.caller, body.code as string);
    res.json({ success: true });
  });
  return router;
}
