import type { Request, Response, Router } from 'express';
import { auth as api } from '../api/index.js';
import { signInSession } from '../auth/accounts.js';
import type { AuthContext } from '../auth/authContext.js';
import { confirmMfa, disableMfa, enrollMfa } from '../auth/mfa.js';
import { completeMfaChallenge } from '../auth/mfaChallenge.js';
import { publicUser } from '../auth/users.js';
import { validationError } from '../errors/apiError.js';
import type { Doc } from '../store/types.js';
import { DeclaredRouter } from './declaredRouter.js';
import { markSecretAnswer } from './idempotency.js';

/** A session for a user who passed every factor, as login answers it (cookie and token). */
export async function answerSignIn(
  auth: AuthContext,
  req: Request,
  res: Response,
  user: Doc,
  status: number,
): Promise<void> {
  const token = await signInSession(auth, user);
  const cookieWarning = auth.cookie.set(req, res, token);
  markSecretAnswer(res);
  res.status(status).json({ user: publicUser(user), token, ...(cookieWarning ? { cookieWarning } : {}) });
}

/**
 * The code of a body: `code` (six digits or a recovery code; a number is read as the six digits
 * it stands for) or `recoveryCode`; exactly one of them.
 */
function codeOf(body: { code?: string | number; recoveryCode?: string }): string {
  const code =
    typeof body.code === 'number'
      ? body.code >= 0 && body.code < 1_000_000
        ? String(body.code).padStart(6, '0')
        : undefined
      : body.code;
  const given = code ?? body.recoveryCode;
  if (!given || (body.code !== undefined && body.recoveryCode !== undefined))
    throw validationError({ code: 'is required: a six-digit code, or a recovery code (here or as recoveryCode)' });
  return given;
}

/** /api/v1/auth/mfa: enroll, confirm, verify (the second step of a sign-in), disable. Bare bodies. */
export function mfaRoutes(auth: AuthContext): Router {
  return new DeclaredRouter(api.AUTH_PATH)
    .json(api.mfaEnroll, async ({ caller, body, res }) => {
      const enrollment = await enrollMfa(auth, caller, body.currentPassword);
      markSecretAnswer(res);
      return enrollment;
    })
    .json(api.mfaConfirm, async ({ caller, body, res }) => {
      const { recoveryCodes } = await confirmMfa(auth, caller, codeOf(body));
      markSecretAnswer(res);
      return { success: true, recoveryCodes };
    })
    .raw(api.mfaVerify, async ({ body, req, res }) => {
      const user = await completeMfaChallenge(auth, body.mfaToken, codeOf(body));
      await answerSignIn(auth, req, res, user, 200);
    })
    .json(api.mfaDisable, async ({ caller, body }) => {
      await disableMfa(auth, caller, codeOf(body));
      return { success: true };
    }).router;
}
