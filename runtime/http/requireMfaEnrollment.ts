import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/apiError.js';
import './requestTypes.js';

/**
 * auth.mfa.requiredFor: a session of a user holding one of those roles who has not turned on
 * two-factor authentication may use /api/v1/auth (me, logout, mfa/enroll, mfa/confirm, ...)
 * and nothing else: 403 MFA_ENROLLMENT_REQUIRED. API keys are not held.
 */
export function requireMfaEnrollment(requiredFor: readonly string[], authPrefix: string) {
  return function requireMfaEnrollment(req: Request, _res: Response, next: NextFunction): void {
    const { user, roles, credential } = req.caller;
    if (
      requiredFor.length === 0 ||
      !user ||
      user.mfaEnabled ||
      credential?.kind !== 'session' ||
      !roles.some((role) => requiredFor.includes(role)) ||
      req.path.startsWith(`${authPrefix}/`)
    )
      return next();
    next(
      new ApiError(
        'MFA_ENROLLMENT_REQUIRED',
        'Your role requires two-factor authentication: turn it on first (POST /api/v1/auth/mfa/enroll, then /confirm)',
      ),
    );
  };
}
