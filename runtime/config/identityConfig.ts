// The identity sections of entigen.config.yaml (`auth:`): sessions, address verification,
// passwords, LDAP, OpenID Connect and OAuth2 providers, passwordless sign-in, two-factor.

export type EmailVerification = 'off' | 'optional' | 'required';

/** The server's own LDAP configuration (config file, environment). */
export interface LdapServerConfig {
  url?: string;
  baseDN?: string;
  userFilter?: string;
  /** Servers a login request's `ldapConfig` may name; empty or absent: `ldapConfig` is refused. */
  allowedRequestUrls?: string[];
}

export interface OidcProviderConfig {
  /** Names the routes: /api/v1/auth/oidc/<name>/start and .../callback. */
  name: string;
  label: string;
  issuer: string;
  clientId: string;
  /** From OIDC_<NAME>_CLIENT_SECRET or the variable `clientSecretEnv` names; none: a public client (PKCE only). */
  clientSecret?: string;
  scopes: string[];
  /** Email domains that may sign in (none: any); compared in lower case. */
  allowedDomains?: string[];
  /** Roles of an account this provider creates. */
  roles: string[];
}

export interface OAuth2ProviderConfig {
  /** Names the routes, as an OpenID provider's: /api/v1/auth/oidc/<name>/start and .../callback. */
  name: string;
  label: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** The user as JSON: `id` (or `sub`), `name`, and `email` with `email_verified` unless emailsUrl is set. */
  userinfoUrl: string;
  /** The user's addresses as `[{ email, primary, verified }]`: only the primary, verified one signs in. */
  emailsUrl?: string;
  clientId: string;
  /** From OAUTH2_<NAME>_CLIENT_SECRET or the variable `clientSecretEnv` names. */
  clientSecret?: string;
  scopes: string[];
  /** Send a PKCE S256 challenge. */
  pkce: boolean;
  allowedDomains?: string[];
  roles: string[];
}

/** What a preset fills in; the file's own values win. */
const OAUTH2_PRESETS: Record<string, Partial<OAuth2ProviderConfig>> = {
  github: {
    label: 'GitHub',
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    userinfoUrl: 'https://api.github.com/user',
    emailsUrl: 'https://api.github.com/user/emails',
    scopes: ['read:user', 'user:email'],
    pkce: true,
  },
};

/** LDAP_ALLOWED_REQUEST_URLS (comma-separated) replaces auth.ldap.allowedRequestUrls. */
export function ldapConfig(raw: LdapServerConfig | undefined, env: NodeJS.ProcessEnv): LdapServerConfig {
  const fromEnv = env.LDAP_ALLOWED_REQUEST_URLS?.split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  return { ...raw, allowedRequestUrls: fromEnv ?? raw?.allowedRequestUrls ?? [] };
}

export function emailVerification(value: string | undefined): EmailVerification {
  if (value === undefined || value === '') return 'off';
  if (value !== 'off' && value !== 'optional' && value !== 'required')
    throw new Error(`EMAIL_VERIFICATION (auth.emailVerification) must be off, optional or required, not "${value}"`);
  return value;
}

type RawOidc = Partial<Omit<OidcProviderConfig, 'roles' | 'scopes'>> & {
  clientSecretEnv?: string;
  roles?: string[];
  scopes?: string[];
};

/** The secret comes from the environment: `clientSecretEnv`, else OIDC_<NAME>_CLIENT_SECRET, else the file. */
export function oidcProviders(raw: RawOidc[] | undefined, env: NodeJS.ProcessEnv): OidcProviderConfig[] {
  const seen = new Set<string>();
  return (raw ?? []).map((provider) => {
    const name = String(provider.name);
    if (seen.has(name)) throw new Error(`auth.oidc: the provider name "${name}" is used twice`);
    seen.add(name);
    const variable = provider.clientSecretEnv ?? `OIDC_${name.toUpperCase().replace(/-/g, '_')}_CLIENT_SECRET`;
    const scopes = provider.scopes ?? ['openid', 'email', 'profile'];
    return {
      name,
      label: provider.label ?? name,
      // Exactly as the provider names itself (some issuers end in /): discovery compares it.
      issuer: String(provider.issuer),
      clientId: String(provider.clientId),
      clientSecret: env[variable] || provider.clientSecret || undefined,
      // The ID token and its email are what sign-in rests on.
      scopes: [...new Set(['openid', 'email', ...scopes])],
      allowedDomains: provider.allowedDomains?.map((domain) => domain.toLowerCase()),
      roles: provider.roles ?? ['USER'],
    };
  });
}

type RawOAuth2 = Partial<OAuth2ProviderConfig> & { preset?: string; clientSecretEnv?: string };

/** Each provider with its preset filled in; every address must be there, and names unique across OpenID and OAuth2. */
export function oauth2Providers(
  raw: RawOAuth2[] | undefined,
  env: NodeJS.ProcessEnv,
  oidc: { name?: string }[],
): OAuth2ProviderConfig[] {
  const seen = new Set(oidc.map((provider) => String(provider.name)));
  return (raw ?? []).map((provider) => {
    const name = String(provider.name);
    if (seen.has(name))
      throw new Error(`auth.oauth2: the provider name "${name}" is used twice (names are shared with auth.oidc)`);
    seen.add(name);
    const preset = provider.preset ? OAUTH2_PRESETS[provider.preset] : {};
    if (!preset)
      throw new Error(
        `auth.oauth2 ${name}: no preset "${provider.preset}" (presets: ${Object.keys(OAUTH2_PRESETS).join(', ')})`,
      );
    const merged = { ...preset, ...Object.fromEntries(Object.entries(provider).filter(([, v]) => v !== undefined)) };
    for (const key of ['authorizeUrl', 'tokenUrl', 'userinfoUrl'] as const)
      if (typeof merged[key] !== 'string') throw new Error(`auth.oauth2 ${name}: ${key} is required (or a preset)`);
    const variable = provider.clientSecretEnv ?? `OAUTH2_${name.toUpperCase().replace(/-/g, '_')}_CLIENT_SECRET`;
    return {
      name,
      label: merged.label ?? name,
      authorizeUrl: merged.authorizeUrl!,
      tokenUrl: merged.tokenUrl!,
      userinfoUrl: merged.userinfoUrl!,
      ...(merged.emailsUrl ? { emailsUrl: merged.emailsUrl } : {}),
      clientId: String(merged.clientId),
      clientSecret: env[variable] || merged.clientSecret || undefined,
      scopes: merged.scopes ?? [],
      pkce: merged.pkce ?? true,
      allowedDomains: merged.allowedDomains?.map((domain) => domain.toLowerCase()),
      roles: merged.roles ?? ['USER'],
    };
  });
}
