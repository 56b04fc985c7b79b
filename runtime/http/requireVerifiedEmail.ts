import type { NextFunction, Request, Response } from 'express';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import { ApiError } from '../errors/apiError.js';
import './requestTypes.js';

/**
 * auth.emailVerification: required. A user who registered and has not confirmed the address
 * may sign in and use /api/v1/auth (me, logout, verify-email, resend-verification,
 * change-email), and nothing else: 403 EMAIL_NOT_VERIFIED, whatever the credential.
 */
export function requireVerifiedEmail(mode: RuntimeConfig['emailVerification'], authPrefix: string) {
  return function requireVerifiedEmail(req: Request, _res: Response, next: NextFunction): void {
    if (mode !== 'required' || req.caller.user?.emailVerified !== false || req.path.startsWith(`${authPrefix}/`))
      return next();
    next(
      new ApiError(
        'EMAIL_NOT_VERIFIED',
        'Confirm your email address first with the link sent to it (POST /api/v1/auth/resend-verification sends a new one)',
      ),
    );
  };
}
