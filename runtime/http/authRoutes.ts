import type { Request, Response, Router } from 'express';
import { requireUser } from '../access/guards.js';
import { labelledTenants, MAX_LISTED_TENANTS, tenantsOf } from '../access/tenancy.js';
import { auth as api } from '../api/index.js';
import {
  changePassword,
  createUser,
  loginWithPassword,
  requestPasswordReset,
  resetPassword,
  revokeSession,
} from '../auth/accounts.js';
import type { AuthContext } from '../auth/authContext.js';
import { registerQuietly, requestEmailChange, resendVerification, verifyEmail } from '../auth/emailVerification.js';
import { ldapAuthenticate, ldapSettings, testLdap } from '../auth/ldap.js';
import { ldapAccount } from '../auth/ldapAccount.js';
import { mfaRequiredFor } from '../auth/mfa.js';
import { issueMfaChallenge } from '../auth/mfaChallenge.js';
import { passwordlessAccount, passwordlessModes, requestPasswordlessSignIn } from '../auth/passwordless.js';
import { publicUser } from '../auth/users.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { metrics } from '../health/metrics.js';
import type { Doc } from '../store/types.js';
import { DeclaredRouter } from './declaredRouter.js';
import { markSecretAnswer } from './idempotency.js';
import { answerSignIn } from './mfaRoutes.js';
import { requestAuth, requestTrace, requestTraceFields } from './requestTrace.js';

/**
 * /api/v1/auth: register, login (password and LDAP), logout, change-password, me, test-ldap,
 * test-mail, password reset, address verification and change. Bare bodies. (Two-factor steps:
 * mfaRoutes.ts; OpenID Connect: oidcRoutes.ts.)
 */
export function authRoutes(auth: AuthContext): Router {
  const signIn = (req: Request, res: Response, user: Doc, status: number) => answerSignIn(auth, req, res, user, status);
  /** The first factor passed: a session, or for an account with two-factor authentication, the second step (202). */
  const firstFactorPassed = async (req: Request, res: Response, user: Doc) => {
    if (!user.mfaEnabledAt) return signIn(req, res, user, 200);
    markSecretAnswer(res);
    res.status(202).json(issueMfaChallenge(auth, user));
  };
  const router = new DeclaredRouter(api.AUTH_PATH);

  router.raw(api.register, async ({ body, req, res }) => {
    // Verification on: the same answer whether or not the address has an account, and no session.
    if (auth.config.emailVerification !== 'off') {
      res.status(201).json({ user: await registerQuietly(requestAuth(auth, req), body) });
      return;
    }
    // Nobody proved the address yet: until someone does, the account is never linked to an
    // identity and `{{user.email}}` rules match nothing for it.
    const user = await createUser(requestAuth(auth, req), { ...body, emailVerified: false });
    await signIn(req, res, user, 201);
  });

  router.json(api.verifyEmail, async ({ body }) => ({
    success: true,
    user: publicUser(await verifyEmail(auth, body.token)),
  }));

  router.json(api.resendVerification, ({ body, req }) => {
    // Like forgot-password: answered before any lookup, the same for every address.
    resendVerification(requestAuth(auth, req), body.email).catch((error) =>
      auth.ctx.logger.error(
        { ...requestTraceFields(req), err: error, correlationId: req.correlationId },
        'verification mail request failed',
      ),
    );
    return { success: true, message: 'If the address waits for confirmation, a new link is on its way' };
  });

  router.json(api.changeEmail, async ({ caller, body, req }) => {
    await requestEmailChange(requestAuth(auth, req), caller, body.newEmail, body.currentPassword);
    return { success: true, message: 'A link that makes the change is on its way to the new address' };
  });

  router.raw(api.login, async ({ body, req, res }) => {
    const { email, password } = body;
    if ((body.authType ?? 'password') === 'password') {
      if (body.ldapConfig !== undefined) throw validationError({ ldapConfig: 'is only for authType ldap' });
      return firstFactorPassed(req, res, await loginWithPassword(requestAuth(auth, req), email, password));
    }
    const settings = await ldapSettings(auth.ctx.store, auth.env, auth.config.ldap, body.ldapConfig);
    if (!settings) throw new ApiError('UNPROCESSABLE_ENTITY', 'LDAP is not configured');
    const identity = await metrics.track('ldap', () => ldapAuthenticate(settings, email, password, requestTrace(req)));
    if (!identity) throw new ApiError('UNAUTHORIZED', 'Invalid email or password');
    const user = await ldapAccount(requestAuth(auth, req), identity, email);
    if (user.disabled === true) throw new ApiError('UNAUTHORIZED', 'Invalid email or password');
    await firstFactorPassed(req, res, user);
  });

  router.raw(api.logout, async ({ caller, req, res }) => {
    await revokeSession(auth, caller);
    auth.cookie.clear(req, res);
    res.json({ success: true });
  });

  router.json(api.changePassword, async ({ caller, body, req, res }) => {
    // It returns a session: a key that could call it would turn itself into its owner.
    if (caller.credential?.kind !== 'session')
      throw new ApiError('FORBIDDEN', 'Sign in with a session to change the password; API keys cannot');
    const token = await changePassword(auth, caller, body.currentPassword, body.newPassword);
    const cookieWarning = auth.cookie.set(req, res, token);
    markSecretAnswer(res);
    return { success: true, token, ...(cookieWarning ? { cookieWarning } : {}) };
  });

  router.json(api.me, async ({ caller }) => {
    const user = requireUser(caller);
    const tenancy = auth.ctx.registry.model.tenancy;
    return {
      user: { ...user, mfaEnabled: user.mfaEnabled === true },
      roles: [...caller.roles],
      permissions: [...caller.permissions].sort(),
      // auth.mfa.requiredFor names one of the roles and the account has not enrolled yet.
      mfaEnrollmentRequired: !user.mfaEnabled && mfaRequiredFor(auth, caller.roles),
      // With tenancy: the tenants the user is a member of, for a client's x-tenant-id choice.
      ...(tenancy
        ? { tenants: await labelledTenants(auth.ctx, (await tenantsOf(auth.ctx, caller)).slice(0, MAX_LISTED_TENANTS)) }
        : {}),
    };
  });

  router.json(api.testMail, ({ caller, body }) => auth.testMail(body.to ?? requireUser(caller).email));

  router.json(api.testLdap, async () => {
    const settings = await ldapSettings(auth.ctx.store, auth.env, auth.config.ldap, undefined);
    return settings
      ? await metrics.track('ldap', () => testLdap(settings))
      : { ok: false, url: null, message: 'LDAP is not configured' };
  });

  router.json(api.forgotPassword, ({ body, req }) => {
    // The answer goes out before any lookup, so its timing says nothing about whether the account exists.
    requestPasswordReset(requestAuth(auth, req), body.email).catch((error) =>
      auth.ctx.logger.error(
        { ...requestTraceFields(req), err: error, correlationId: req.correlationId },
        'password reset request failed',
      ),
    );
    return { success: true, message: 'If the account exists, a reset token is on its way' };
  });

  router.json(api.passwordless, ({ body, req }) => {
    passwordlessModes(auth);
    // As for forgot-password: answered before any lookup, the same for every address.
    requestPasswordlessSignIn(requestAuth(auth, req), body.email).catch((error) =>
      auth.ctx.logger.error(
        { ...requestTraceFields(req), err: error, correlationId: req.correlationId },
        'passwordless sign-in request failed',
      ),
    );
    return { success: true, message: 'If the account exists, a way to sign in is on its way' };
  });

  router.raw(api.passwordlessSignIn, async ({ body, req, res }) => {
    await firstFactorPassed(req, res, await passwordlessAccount(auth, body));
  });

  router.json(api.resetPassword, async ({ body }) => {
    await resetPassword(auth, body.token, body.newPassword);
    return { success: true };
  });
  return router.router;
}
