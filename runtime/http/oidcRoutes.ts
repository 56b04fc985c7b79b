import express, { type Request, type Response, type Router } from 'express';
import { auth as api } from '../api/index.js';
import { signInSession } from '../auth/accounts.js';
import type { AuthContext } from '../auth/authContext.js';
import { completeMfaChallenge, issueMfaChallenge } from '../auth/mfaChallenge.js';
import { finishOAuth2SignIn, type OAuth2Clients, startOAuth2SignIn } from '../auth/oauth2.js';
import { finishOidcSignIn, OIDC_FLOW_TTL_MS, type OidcClients, safeReturnTo, startOidcSignIn } from '../auth/oidc.js';
import { oidcAccount } from '../auth/oidcAccount.js';
import { FieldCipher } from '../crypto/fieldCipher.js';
import { ApiError } from '../errors/apiError.js';
import { escapeHtml } from '../model/escapeHtml.js';
import { cookieValue } from './authenticate.js';
import { DeclaredRouter } from './declaredRouter.js';
import { requestAuth } from './requestTrace.js';

/** Where the second-factor form of an OpenID sign-in posts (form-encoded, read by this router itself). */
export const OIDC_MFA_FORM_PATH = api.oidcMfa.path;
const FLOW_COOKIE_PATH = '/api/v1/auth/oidc';

/**
 * /api/v1/auth/oidc: the providers, then per provider `start` (302 to the provider) and
 * `callback` (the account by verified email, the session cookie, a page that goes on to
 * returnTo). An account with two-factor authentication gets a code form instead of a session.
 */
export function oidcRoutes(auth: AuthContext, clients: OidcClients, oauth2: OAuth2Clients): Router {
  const router = new DeclaredRouter(api.AUTH_PATH);
  const flowCookie = `${auth.cookieName.replace(/_uid$/, '')}_oidc`;
  // Lax, not Strict: the provider's redirect back is a navigation from another site.
  const setFlow = (req: Request, res: Response, value: string) =>
    res.cookie(flowCookie, value, {
      httpOnly: true,
      secure: auth.cookie.secure(req),
      sameSite: 'lax',
      path: FLOW_COOKIE_PATH,
      maxAge: OIDC_FLOW_TTL_MS,
      encode: String,
    });
  const endFlow = (req: Request, res: Response) =>
    res.clearCookie(flowCookie, {
      httpOnly: true,
      secure: auth.cookie.secure(req),
      sameSite: 'lax',
      path: FLOW_COOKIE_PATH,
    });
  const pending = new FieldCipher(`oidc-mfa:${auth.ctx.secrets.encryption ?? auth.ctx.secrets.signing}`);

  router.json(api.oidcProviders, () => ({
    items: [...clients.providers, ...oauth2.providers].map((provider) => ({
      name: provider.name,
      label: provider.label,
      startUrl: `/api/v1/auth/oidc/${provider.name}/start`,
    })),
  }));

  router.raw(api.oidcStart, async ({ params, query, req, res }) => {
    const returnTo = safeReturnTo(query.returnTo);
    const plain = oauth2.find(params.provider);
    const { url, flow } = plain
      ? startOAuth2SignIn(auth, plain, returnTo)
      : await startOidcSignIn(requestAuth(auth, req), clients, params.provider, returnTo);
    setFlow(req, res, flow);
    res.redirect(302, url);
  });

  router.raw(api.oidcCallback, async ({ req, params, res }) => {
    const query = new URL(req.originalUrl, 'http://callback').searchParams;
    endFlow(req, res);
    const sealed = cookieValue(req.headers.cookie, flowCookie);
    const plain = oauth2.find(params.provider);
    const { identity, returnTo } = plain
      ? await finishOAuth2SignIn(auth, plain, query, sealed)
      : await finishOidcSignIn(requestAuth(auth, req), clients, params.provider, query, sealed);
    const user = await oidcAccount(requestAuth(auth, req), identity);
    if (user.mfaEnabledAt) {
      const { mfaToken } = issueMfaChallenge(auth, user);
      setFlow(req, res, pending.encrypt(JSON.stringify({ mfaToken, returnTo })));
      return void res.type('html').send(codeForm(auth, ''));
    }
    auth.cookie.set(req, res, await signInSession(auth, user));
    res.type('html').send(continuePage(auth, returnTo));
  });

  // The code form's answer; the pending sign-in travels in the Lax cookie, so another site cannot post it.
  const pendingSignIn = (req: Request): { mfaToken?: unknown; returnTo?: unknown } => {
    try {
      return JSON.parse(pending.decrypt(cookieValue(req.headers.cookie, flowCookie) ?? ''));
    } catch {
      throw new ApiError('UNAUTHORIZED', 'This sign-in has expired or is not valid; sign in again');
    }
  };
  const wrongCode = (res: Response) =>
    void res.status(401).type('html').send(codeForm(auth, 'That code is not valid. Try the current one.'));
  router.raw(
    api.oidcMfa,
    async ({ req, body, res }) => {
      const state = pendingSignIn(req);
      try {
        const user = await completeMfaChallenge(auth, String(state.mfaToken), body.code);
        endFlow(req, res);
        auth.cookie.set(req, res, await signInSession(auth, user));
        res.redirect(303, safeReturnTo(state.returnTo));
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'UNAUTHORIZED' || !error.details) throw error;
        wrongCode(res);
      }
    },
    {
      before: [express.urlencoded({ limit: '2kb' })],
      invalid: (_error, req, res) => {
        pendingSignIn(req);
        wrongCode(res);
      },
    },
  );
  return router.router;
}

function shell(auth: AuthContext, title: string, body: string, head = ''): string {
  const app = escapeHtml(auth.ctx.registry.model.app.name);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${head}<title>${title} · ${app}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}input,button{font:inherit;padding:.5rem}.error{color:#cf222e}</style></head><body>${body}</body></html>`;
}

/** Signed in: a page of this site goes on, so the Strict session cookie travels with the next request. */
function continuePage(auth: AuthContext, returnTo: string): string {
  const target = escapeHtml(returnTo);
  return shell(
    auth,
    'Signed in',
    `<h1>Signed in</h1><p><a href="${target}">Continue</a></p>`,
    `<meta http-equiv="refresh" content="0;url=${target}">`,
  );
}

function codeForm(auth: AuthContext, error: string): string {
  return shell(
    auth,
    'Two-factor authentication',
    `<h1>Two-factor authentication</h1>${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}<form method="post" action="${OIDC_MFA_FORM_PATH}"><label for="code">Code from your authenticator app, or a recovery code</label><br><input id="code" name="code" autocomplete="one-time-code" required maxlength="64" autofocus> <button type="submit">Verify</button></form>`,
  );
}
