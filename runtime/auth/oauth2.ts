import { createHash, randomBytes } from 'node:crypto';
import type { OAuth2ProviderConfig } from '../config/runtimeConfig.js';
import { ApiError } from '../errors/apiError.js';
import type { AuthContext } from './authContext.js';
import {
  callbackUrl,
  checkedFlow,
  type Flow,
  LOOPBACK,
  type OidcIdentity,
  sealFlow,
  verifiedIdentity,
} from './oidc.js';

/** Milliseconds a request to a provider (token, user, emails) may take. */
const PROVIDER_TIMEOUT_MS = 10_000;
/** The most of a provider's answer that is read. */
const MAX_ANSWER_BYTES = 1024 * 1024;

const random = () => randomBytes(32).toString('base64url');
const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** Plain OAuth2 providers (not OpenID Connect): GitHub and its like, by their configured addresses. */
export class OAuth2Clients {
  constructor(readonly providers: readonly OAuth2ProviderConfig[]) {
    for (const provider of providers)
      for (const address of [provider.authorizeUrl, provider.tokenUrl, provider.userinfoUrl, provider.emailsUrl]) {
        if (!address) continue;
        const url = new URL(address);
        if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname)))
          throw new Error(`auth.oauth2 ${provider.name}: ${address} must be https:// (http only on this machine)`);
      }
  }

  find(name: string): OAuth2ProviderConfig | undefined {
    return this.providers.find((candidate) => candidate.name === name);
  }
}

/** The provider's authorization URL (code flow, state, PKCE S256 where configured) and the sealed flow. */
export function startOAuth2SignIn(
  auth: AuthContext,
  provider: OAuth2ProviderConfig,
  returnTo: string,
): { url: string; flow: string } {
  const flow: Flow = {
    provider: provider.name,
    state: random(),
    verifier: random(),
    returnTo,
    startedAt: auth.ctx.now().getTime(),
  };
  const url = new URL(provider.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', provider.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(auth, provider));
  if (provider.scopes.length > 0) url.searchParams.set('scope', provider.scopes.join(' '));
  url.searchParams.set('state', flow.state);
  if (provider.pkce) {
    url.searchParams.set('code_challenge', challengeOf(flow.verifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return { url: url.href, flow: sealFlow(auth, flow) };
}

/**
 * The callback: the flow this browser started, the code exchanged for an access token (with the
 * PKCE verifier and the client secret), the user and its address. Only an address the provider
 * says is verified signs in: with `emailsUrl`, the primary one and only if it is verified.
 */
export async function finishOAuth2SignIn(
  auth: AuthContext,
  provider: OAuth2ProviderConfig,
  query: URLSearchParams,
  sealedFlow: string | undefined,
): Promise<{ identity: OidcIdentity; returnTo: string }> {
  const flow = checkedFlow(auth, provider, query, sealedFlow);
  const code = query.get('code');
  if (!code || code.length > 2000)
    throw new ApiError('UNAUTHORIZED', `${provider.label} sent no sign-in code back`, { code: 'is missing' });
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: callbackUrl(auth, provider),
    client_id: provider.clientId,
    ...(provider.clientSecret ? { client_secret: provider.clientSecret } : {}),
    ...(provider.pkce ? { code_verifier: flow.verifier } : {}),
  });
  const tokens = await call(provider, provider.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  if (typeof tokens.error === 'string' || typeof tokens.access_token !== 'string') {
    const what =
      tokens.error === 'bad_verification_code' || tokens.error === 'invalid_grant'
        ? 'the sign-in code has expired or was used already'
        : String(tokens.error ?? 'no access token').slice(0, 100);
    throw new ApiError('UNAUTHORIZED', `${provider.label} refused the sign-in: ${what}`);
  }
  const bearer = { authorization: `Bearer ${tokens.access_token}` };
  const user = await call(provider, provider.userinfoUrl, { headers: bearer });
  const subject = user.id ?? user.sub;
  if ((typeof subject !== 'string' && typeof subject !== 'number') || String(subject).length > 200)
    throw new ApiError('UNAUTHORIZED', `${provider.label} did not say who signed in (no id)`);
  let profile: Record<string, unknown> = user;
  if (provider.emailsUrl) {
    const emails = await call(provider, provider.emailsUrl, { headers: bearer });
    const list = Array.isArray(emails) ? (emails as Record<string, unknown>[]) : [];
    const primary = list.find((entry) => entry && typeof entry === 'object' && entry.primary === true);
    profile = {
      name: typeof user.name === 'string' && user.name ? user.name : user.login,
      email: primary?.email,
      email_verified: primary?.verified === true,
    };
  }
  return { identity: verifiedIdentity(provider, String(subject), profile), returnTo: flow.returnTo };
}

/** One JSON request to the provider, bounded in time and size; never a 500 for what it answers. */
async function call(provider: OAuth2ProviderConfig, url: string, init: RequestInit): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      redirect: 'error',
      headers: { accept: 'application/json', 'user-agent': 'entigen', ...(init.headers as Record<string, string>) },
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ApiError('SERVICE_UNAVAILABLE', `${provider.label} cannot be reached; try again`, undefined, error);
  }
  if (Number(response.headers.get('content-length') ?? 0) > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw new ApiError('SERVICE_UNAVAILABLE', `${provider.label} answered more than the sign-in needs`);
  }
  const text = await response.text();
  if (text.length > MAX_ANSWER_BYTES)
    throw new ApiError('SERVICE_UNAVAILABLE', `${provider.label} answered more than the sign-in needs`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!body || typeof body !== 'object') {
    throw new ApiError(
      response.status >= 500 ? 'SERVICE_UNAVAILABLE' : 'UNAUTHORIZED',
      `${provider.label} answered ${response.status} without JSON`,
    );
  }
  if (!response.ok && !('error' in body))
    throw new ApiError('UNAUTHORIZED', `${provider.label} refused the sign-in (${response.status})`);
  return body as Record<string, unknown>;
}
