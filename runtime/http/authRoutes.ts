import type { Router } from 'express';
import { requireAdmin, requireUser } from '../access/guards.js';
import { labelledTenants, MAX_LISTED_TENANTS, tenantsOf } from '../access/tenancy.js';
import {
  changePassword,
  createUser,
  loginWithPassword,
  requestPasswordReset,
  resetPassword,
  revokeSession,
} from '../auth/accounts.js';
import type { AuthContext } from '../auth/authContext.js';
import { requestEmailChange, resendVerification, sendVerification, verifyEmail } from '../auth/emailVerification.js';
import { ldapAuthenticate, ldapSettings, testLdap } from '../auth/ldap.js';
import { ldapAccount } from '../auth/ldapAccount.js';
import { mfaRequiredFor } from '../auth/mfa.js';
import { issueMfaChallenge } from '../auth/mfaChallenge.js';
import { clearSessionCookie, setSessionCookie } from '../auth/sessionCookie.js';
import { publicUser } from '../auth/users.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { metrics } from '../health/metrics.js';
import type { Doc } from '../store/types.js';
import { exactRouter } from './exactRouter.js';
import { markSecretAnswer } from './idempotency.js';
import { answerSignIn } from './mfaRoutes.js';
import { readBody } from './readBody.js';

/**
 * /api/v1/auth: register, login (password and LDAP), logout, change-password, me, test-ldap,
 * test-mail, password reset, address verification and change. Bare bodies. (Two-factor steps:
 * mfaRoutes.ts; OpenID Connect: oidcRoutes.ts.)
 */
export function authRoutes(auth: AuthContext): Router {
  const router = exactRouter();
  const signIn = (res: import('express').Response, user: Doc, status: number) => answerSignIn(auth, res, user, status);
  /** The first factor passed: a session, or for an account with two-factor authentication, the second step (202). */
  const firstFactorPassed = async (res: import('express').Response, user: Doc) => {
    if (!user.mfaEnabledAt) return signIn(res, user, 200);
    markSecretAnswer(res);
    res.status(202).json(issueMfaChallenge(auth, user));
  };

  router.post('/register', async (req, res) => {
    const body = readBody(req.body, {
      email: { type: 'string', required: true, max: 320 },
      password: { type: 'string', required: true, max: 1024 },
      displayName: { type: 'string', required: true, min: 1, max: 200 },
    });
    const verifying = auth.config.emailVerification !== 'off';
    const user = await createUser(auth, {
      email: body.email as string,
      password: body.password as string,
      displayName: body.displayName as string,
      ...(verifying ? { emailVerified: false } : {}),
    });
    // Queued in the outbox: the mail server's state never holds up or fails the registration.
    if (verifying) await sendVerification(auth, user);
    signIn(res, user, 201);
  });

  router.post('/verify-email', async (req, res) => {
    const body = readBody(req.body, { token: { type: 'string', required: true, max: 200 } });
    const user = await verifyEmail(auth, body.token as string);
    res.json({ success: true, user: publicUser(user) });
  });

  router.post('/resend-verification', async (req, res) => {
    const body = readBody(req.body, { email: { type: 'string', required: true, max: 320 } });
    // Like forgot-password: answered before any lookup, the same for every address.
    resendVerification(auth, body.email as string).catch((error) =>
      auth.ctx.logger.error({ err: error, correlationId: req.correlationId }, 'verification mail request failed'),
    );
    res.status(202).json({ success: true, message: 'If the address waits for confirmation, a new link is on its way' });
  });

  router.post('/change-email', async (req, res) => {
    requireUser(req.caller);
    const body = readBody(req.body, {
      newEmail: { type: 'string', required: true, max: 320 },
      currentPassword: { type: 'string', required: true, max: 1024 },
    });
    await requestEmailChange(auth, req.caller, body.newEmail as string, body.currentPassword as string);
    res.status(202).json({ success: true, message: 'A link that makes the change is on its way to the new address' });
  });

  router.post('/login', async (req, res) => {
    const body = readBody(req.body, {
      authType: { type: 'enum', values: ['password', 'ldap'] },
      email: { type: 'string', required: true, max: 320 },
      password: { type: 'string', required: true, max: 1024 },
      ldapConfig: { type: 'object' },
    });
    const email = body.email as string;
    const password = body.password as string;
    if ((body.authType ?? 'password') === 'password') {
      if (body.ldapConfig !== undefined) throw validationError({ ldapConfig: 'is only for authType ldap' });
      return firstFactorPassed(res, await loginWithPassword(auth, email, password));
    }
    const requested =
      body.ldapConfig === undefined
        ? undefined
        : readBody(body.ldapConfig, {
            url: { type: 'string', max: 500 },
            baseDN: { type: 'string', max: 500 },
            userFilter: { type: 'string', max: 500 },
          });
    const settings = await ldapSettings(auth.ctx.store, auth.env, auth.config.ldap, requested);
    if (!settings) throw new ApiError('UNPROCESSABLE_ENTITY', 'LDAP is not configured');
    const identity = await metrics.track('ldap', () => ldapAuthenticate(settings, email, password));
    if (!identity) throw new ApiError('UNAUTHORIZED', 'Invalid email or password');
    const user = await ldapAccount(auth, identity, email);
    if (user.disabled === true) throw new ApiError('UNAUTHORIZED', 'Invalid email or password');
    await firstFactorPassed(res, user);
  });

  router.post('/logout', async (req, res) => {
    await revokeSession(auth, req.caller);
    clearSessionCookie(res, auth.cookieName);
    res.json({ success: true });
  });

  router.post('/change-password', async (req, res) => {
    requireUser(req.caller);
    // It returns a session: a key that could call it would turn itself into its owner.
    if (req.caller.credential?.kind !== 'session')
      throw new ApiError('FORBIDDEN', 'Sign in with a session to change the password; API keys cannot');
    const body = readBody(req.body, {
      currentPassword: { type: 'string', required: true, max: 1024 },
      newPassword: { type: 'string', required: true, max: 1024 },
    });
    const token = await changePassword(auth, req.caller, body.currentPassword as string, body.newPassword as string);
    setSessionCookie(res, auth.cookieName, token, auth.config.sessionTtlMs);
    markSecretAnswer(res);
    res.json({ success: true, token });
  });

  router.get('/me', async (req, res) => {
    const user = requireUser(req.caller);
    const tenancy = auth.ctx.registry.model.tenancy;
    res.json({
      user: { ...user, mfaEnabled: user.mfaEnabled === true },
      roles: req.caller.roles,
      permissions: [...req.caller.permissions].sort(),
      // auth.mfa.requiredFor names one of the roles and the account has not enrolled yet.
      mfaEnrollmentRequired: !user.mfaEnabled && mfaRequiredFor(auth, req.caller.roles),
      // With tenancy: the tenants the user is a member of, for a client's x-tenant-id choice.
      ...(tenancy
        ? {
            tenants: await labelledTenants(
              auth.ctx,
              (await tenantsOf(auth.ctx, req.caller)).slice(0, MAX_LISTED_TENANTS),
            ),
          }
        : {}),
    });
  });

  router.post('/test-mail', async (req, res) => {
    const admin = requireUser(req.caller);
    requireAdmin(req.caller);
    const body = readBody(req.body ?? {}, { to: { type: 'string', max: 320 } });
    res.json(await auth.testMail((body.to as string | undefined) ?? admin.email));
  });

  router.get('/test-ldap', async (req, res) => {
    requireAdmin(req.caller);
    const settings = await ldapSettings(auth.ctx.store, auth.env, auth.config.ldap, undefined);
    res.json(
      settings
        ? await metrics.track('ldap', () => testLdap(settings))
        : { ok: false, url: null, message: 'LDAP is not configured' },
    );
  });

  router.post('/forgot-password', async (req, res) => {
    const body = readBody(req.body, { email: { type: 'string', required: true, max: 320 } });
    // The answer goes out before any lookup, so its timing says nothing about whether the account exists.
    requestPasswordReset(auth, body.email as string).catch((error) =>
      auth.ctx.logger.error({ err: error, correlationId: req.correlationId }, 'password reset request failed'),
    );
    res.status(202).json({ success: true, message: 'If the account exists, a reset token is on its way' });
  });

  router.post('/reset-password', async (req, res) => {
    const body = readBody(req.body, {
      token: { type: 'string', required: true, max: 200 },
      newPassword: { type: 'string', required: true, max: 1024 },
    });
    await resetPassword(auth, body.token as string, body.newPassword as string);
    res.json({ success: true });
  });
  return router;
}
