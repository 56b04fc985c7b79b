import type { Response, Router } from 'express';
import { requireUser } from '../access/guards.js';
import { signInSession } from '../auth/accounts.js';
import type { AuthContext } from '../auth/authContext.js';
import { confirmMfa, disableMfa, enrollMfa } from '../auth/mfa.js';
import { completeMfaChallenge } from '../auth/mfaChallenge.js';
import { setSessionCookie } from '../auth/sessionCookie.js';
import { publicUser } from '../auth/users.js';
import { validationError } from '../errors/apiError.js';
import type { Doc } from '../store/types.js';
import { exactRouter } from './exactRouter.js';
import { markSecretAnswer } from './idempotency.js';
import { type BodySpec, readBody } from './readBody.js';

/** A session for a user who passed every factor, as login answers it (cookie and token). */
export async function answerSignIn(auth: AuthContext, res: Response, user: Doc, status: number): Promise<void> {
  const token = await signInSession(auth, user);
  setSessionCookie(res, auth.cookieName, token, auth.config.sessionTtlMs);
  markSecretAnswer(res);
  res.status(status).json({ user: publicUser(user), token });
}

const CODE = { type: 'string', required: true, min: 1, max: 64 } as const;

/**
 * The code of a body: `code` (six digits or a recovery code; a JSON number is read as the six
 * digits it stands for) or `recoveryCode`; exactly one of them.
 */
function codeOf(body: unknown, spec: BodySpec): { fields: Record<string, unknown>; code: string } {
  const input =
    body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : body;
  if (input && typeof input === 'object' && 'code' in input) {
    const { code } = input as { code: unknown };
    if (typeof code === 'number' && Number.isInteger(code) && code >= 0 && code < 1_000_000)
      (input as Record<string, unknown>).code = String(code).padStart(6, '0');
  }
  const fields = readBody(input, {
    ...spec,
    code: { ...CODE, required: false },
    recoveryCode: { ...CODE, required: false },
  });
  const code = (fields.code ?? fields.recoveryCode) as string | undefined;
  if (code === undefined || (fields.code !== undefined && fields.recoveryCode !== undefined))
    throw validationError({ code: 'is required: a six-digit code, or a recovery code (here or as recoveryCode)' });
  return { fields, code };
}

/** /api/v1/auth/mfa: enroll, confirm, verify (the second step of a sign-in), disable. Bare bodies. */
export function mfaRoutes(auth: AuthContext): Router {
  const router = exactRouter();

  router.post('/mfa/enroll', async (req, res) => {
    requireUser(req.caller);
    const body = readBody(req.body ?? {}, { currentPassword: { type: 'string', max: 1024 } });
    const enrollment = await enrollMfa(auth, req.caller, body.currentPassword as string | undefined);
    markSecretAnswer(res);
    res.json(enrollment);
  });

  router.post('/mfa/confirm', async (req, res) => {
    requireUser(req.caller);
    const { recoveryCodes } = await confirmMfa(auth, req.caller, codeOf(req.body, {}).code);
    markSecretAnswer(res);
    res.json({ success: true, recoveryCodes });
  });

  router.post('/mfa/verify', async (req, res) => {
    const { fields, code } = codeOf(req.body, { mfaToken: { type: 'string', required: true, max: 200 } });
    const user = await completeMfaChallenge(auth, fields.mfaToken as string, code);
    await answerSignIn(auth, res, user, 200);
  });

  router.post('/mfa/disable', async (req, res) => {
    requireUser(req.caller);
    await disableMfa(auth, req.caller, codeOf(req.body, {}).code);
    res.json({ success: true });
  });
  return router;
}
