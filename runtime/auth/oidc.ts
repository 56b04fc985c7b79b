import type * as OpenId from 'openid-client';
import type { OidcProviderConfig } from '../config/runtimeConfig.js';
import { FieldCipher } from '../crypto/fieldCipher.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { traceOf } from '../store/tracedStore.js';
import { type Context, inSpan, SpanKind, type SpanOptions } from '../telemetry/tracing.js';
import type { AuthContext } from './authContext.js';

/** A sign-in must come back from the provider within this time. */
export const OIDC_FLOW_TTL_MS = 10 * 60_000;
/** Seconds a request to a provider (discovery, token, userinfo) may take. */
const PROVIDER_TIMEOUT_S = 10;
/** Host names of this machine: the only ones a provider may be reached at over plain http. */
export const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;
/** openid-client is loaded with the first sign-in, not by servers that have no provider. */
const openid = () => import('openid-client');

/** What the browser carries between start and callback, sealed in a cookie of its own. */
export interface Flow {
  provider: string;
  state: string;
  /** OpenID only: the ID token must carry it. */
  nonce?: string;
  verifier: string;
  returnTo: string;
  startedAt: number;
}

/** The claims sign-in rests on, from the ID token (or userinfo when the token lacks the email). */
export interface OidcIdentity {
  /** The provider, OpenID or plain OAuth2: its name links the account, its roles go to a new one. */
  provider: Pick<OidcProviderConfig, 'name' | 'label' | 'roles'>;
  subject: string;
  email: string;
  name?: string;
}

/**
 * The configured OpenID providers: each one's metadata is discovered on first use and kept (a
 * failed discovery is tried again on the next sign-in, so a provider down at start costs nothing).
 */
export class OidcClients {
  private readonly configurations = new Map<string, Promise<OpenId.Configuration>>();

  constructor(readonly providers: readonly OidcProviderConfig[]) {
    for (const provider of providers) {
      const issuer = new URL(provider.issuer);
      if (issuer.protocol !== 'https:' && !LOOPBACK.test(issuer.hostname))
        throw new Error(`auth.oidc ${provider.name}: the issuer must be https:// (http only on this machine)`);
    }
  }

  provider(name: string): OidcProviderConfig {
    const provider = this.providers.find((candidate) => candidate.name === name);
    if (!provider) throw notFound('Sign-in provider');
    return provider;
  }

  /** The provider's configuration, discovered once (in the trace of the sign-in that needed it first). */
  configuration(provider: OidcProviderConfig, trace?: Context): Promise<OpenId.Configuration> {
    let found = this.configurations.get(provider.name);
    if (!found) {
      const insecure = new URL(provider.issuer).protocol === 'http:';
      // The ID token's signature is checked against the provider's published keys (jwks_uri),
      // not only trusted because it came over TLS: a token signed by any other key is refused.
      found = openid()
        .then((client) => {
          const execute = [...(insecure ? [client.allowInsecureRequests] : []), client.enableNonRepudiationChecks];
          return inSpan(`oidc discovery ${provider.name}`, providerSpan(provider, trace), () =>
            client.discovery(
              new URL(provider.issuer),
              provider.clientId,
              provider.clientSecret,
              provider.clientSecret ? client.ClientSecretBasic(provider.clientSecret) : client.None(),
              { execute, timeout: PROVIDER_TIMEOUT_S },
            ),
          );
        })
        .then((configuration) => {
          if (!configuration.serverMetadata().jwks_uri)
            throw new Error('the provider publishes no jwks_uri: its ID tokens cannot be verified');
          return configuration;
        })
        .catch((error: unknown) => {
          this.configurations.delete(provider.name);
          throw new ApiError(
            'SERVICE_UNAVAILABLE',
            `The sign-in provider ${provider.name} cannot be reached or does not describe itself as ${provider.issuer}`,
            undefined,
            error,
          );
        });
      this.configurations.set(provider.name, found);
    }
    return found;
  }
}

const flowCipher = (auth: AuthContext) =>
  new FieldCipher(`oidc:${auth.ctx.secrets.encryption ?? auth.ctx.secrets.signing}`);

/** Where the provider sends the browser back: `<publicUrl>/api/v1/auth/oidc/<name>/callback`. */
export function callbackUrl(auth: AuthContext, provider: { name: string }): string {
  return `${auth.publicUrl()}/api/v1/auth/oidc/${provider.name}/callback`;
}

/**
 * Only a path of this site: never `//host`, `/\host` or a scheme, so the sign-in cannot redirect
 * elsewhere; printable ASCII only (it becomes a Location header and a page's refresh URL).
 */
export function safeReturnTo(value: unknown): string {
  if (value === undefined) return '/';
  if (typeof value !== 'string' || value.length > 500 || !/^\/(?![/\\])[!-[\]-~]*$/.test(value))
    throw validationError({ returnTo: 'must be a path on this site, like /admin' });
  return value;
}

/** GET /auth/oidc/{name}/start: the provider's authorization URL (code flow, PKCE S256, state, nonce) and the sealed flow. */
export async function startOidcSignIn(
  auth: AuthContext,
  clients: OidcClients,
  name: string,
  returnTo: string,
): Promise<{ url: string; flow: string }> {
  const provider = clients.provider(name);
  const configuration = await clients.configuration(provider, traceOf(auth.ctx.store));
  const client = await openid();
  const nonce = client.randomNonce();
  const flow: Flow = {
    provider: provider.name,
    state: client.randomState(),
    nonce,
    verifier: client.randomPKCECodeVerifier(),
    returnTo,
    startedAt: auth.ctx.now().getTime(),
  };
  const url = client.buildAuthorizationUrl(configuration, {
    redirect_uri: callbackUrl(auth, provider),
    scope: provider.scopes.join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce,
  });
  return { url: url.href, flow: sealFlow(auth, flow) };
}

export function sealFlow(auth: AuthContext, flow: Flow): string {
  return flowCipher(auth).encrypt(JSON.stringify(flow));
}

/**
 * The flow this browser started for `provider`, in the last 10 minutes, whose state the callback
 * repeats; and the provider's refusal, if it refused.
 */
export function checkedFlow(
  auth: AuthContext,
  provider: { name: string; label: string },
  query: URLSearchParams,
  sealedFlow: string | undefined,
): Flow {
  const flow = openFlow(auth, sealedFlow);
  if (!flow || flow.provider !== provider.name || auth.ctx.now().getTime() - flow.startedAt > OIDC_FLOW_TTL_MS)
    throw validationError(
      { state: 'does not belong to a sign-in this browser started in the last 10 minutes' },
      'This sign-in was not started here or has expired; start it again',
    );
  if (query.get('state') !== flow.state)
    throw validationError({ state: 'does not match the sign-in this browser started' }, 'Sign-in state mismatch');
  const denied = query.get('error');
  if (denied)
    throw new ApiError('UNAUTHORIZED', `${provider.label} did not sign you in (${denied.slice(0, 100)})`, {
      provider: (query.get('error_description') ?? denied).slice(0, 300),
    });
  return flow;
}

/**
 * The callback: the flow this browser started, the provider's answer checked by openid-client
 * (state, PKCE, issuer, ID token signature, audience, nonce, expiry), then a verified email.
 */
export async function finishOidcSignIn(
  auth: AuthContext,
  clients: OidcClients,
  name: string,
  query: URLSearchParams,
  sealedFlow: string | undefined,
): Promise<{ identity: OidcIdentity; returnTo: string }> {
  const provider = clients.provider(name);
  const flow = checkedFlow(auth, provider, query, sealedFlow);
  const trace = traceOf(auth.ctx.store);
  const configuration = await clients.configuration(provider, trace);
  const client = await openid();
  const current = new URL(`${callbackUrl(auth, provider)}?${query}`);
  let tokens: Awaited<ReturnType<typeof OpenId.authorizationCodeGrant>>;
  try {
    tokens = await inSpan(`oidc token ${provider.name}`, providerSpan(provider, trace), () =>
      client.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce ?? client.randomNonce(),
        idTokenExpected: true,
      }),
    );
  } catch (error) {
    throw refusal(provider, error, client);
  }
  const claims = tokens.claims();
  if (!claims) throw new ApiError('UNAUTHORIZED', `${provider.label} returned no ID token`);
  let profile: Record<string, unknown> = claims;
  if (typeof claims.email !== 'string') {
    try {
      profile = await inSpan(`oidc userinfo ${provider.name}`, providerSpan(provider, trace), () =>
        client.fetchUserInfo(configuration, tokens.access_token, claims.sub),
      );
    } catch (error) {
      throw refusal(provider, error, client);
    }
  }
  return { identity: verifiedIdentity(provider, claims.sub, profile), returnTo: flow.returnTo };
}

function openFlow(auth: AuthContext, sealed: string | undefined): Flow | undefined {
  if (!sealed || sealed.length > 4096) return undefined;
  try {
    return JSON.parse(flowCipher(auth).decrypt(sealed)) as Flow;
  } catch {
    return undefined;
  }
}

/** Only an address the provider says it verified, and only from an allowed domain. */
export function verifiedIdentity(
  provider: Pick<OidcProviderConfig, 'name' | 'label' | 'roles' | 'allowedDomains'>,
  subject: string,
  profile: Record<string, unknown>,
): OidcIdentity {
  const email = typeof profile.email === 'string' ? profile.email.trim().toLowerCase() : undefined;
  if (!email)
    throw new ApiError('FORBIDDEN', `${provider.label} did not share an email address; allow the email scope`);
  if (profile.email_verified !== true && profile.email_verified !== 'true')
    throw new ApiError('FORBIDDEN', `${provider.label} has not verified ${email}; sign-in with it is refused`);
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (provider.allowedDomains && !provider.allowedDomains.includes(domain))
    throw new ApiError('FORBIDDEN', `Addresses at ${domain} may not sign in with ${provider.label}`);
  const name = typeof profile.name === 'string' && profile.name.trim() ? profile.name.trim().slice(0, 200) : undefined;
  return { provider, subject, email, name };
}

/** What the provider or openid-client refused, as the envelope: never a 500, the cause logged. */
function refusal(provider: OidcProviderConfig, error: unknown, client: typeof OpenId): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) {
    const what = error.error === 'invalid_grant' ? 'the sign-in code has expired or was used already' : error.error;
    return new ApiError('UNAUTHORIZED', `${provider.label} refused the sign-in: ${what}`, undefined, error);
  }
  const code = (error as { code?: unknown })?.code;
  if (error instanceof client.ClientError || (typeof code === 'string' && code.startsWith('OAUTH_')))
    return new ApiError(
      'UNAUTHORIZED',
      `The answer of ${provider.label} did not pass its checks (${(error as Error).message})`,
      undefined,
      error,
    );
  return new ApiError('SERVICE_UNAVAILABLE', `${provider.label} cannot be reached; try again`, undefined, error);
}

/** A span of a call to an OpenID provider: its host, never a token or a code. */
function providerSpan(provider: OidcProviderConfig, parent: Context | undefined): SpanOptions {
  return {
    kind: SpanKind.CLIENT,
    parent,
    attributes: { 'server.address': new URL(provider.issuer).hostname, 'entigen.oidc.provider': provider.name },
  };
}
