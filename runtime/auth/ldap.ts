import type { LdapServerConfig } from '../config/runtimeConfig.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { SETTINGS } from '../model/collections.js';
import type { Store } from '../store/types.js';
import { type Context, inSpan, SpanKind } from '../telemetry/tracing.js';

export interface LdapSettings {
  url: string;
  baseDN: string;
  userFilter: string;
  /** Optional service account for the user search; otherwise the search binds anonymously. */
  bindDN?: string;
  bindPassword?: string;
}

export const DEFAULT_USER_FILTER = '(uid={username})';
/** ldapts is loaded on the first LDAP sign-in or test, not by servers that never use LDAP. */
const ldapts = () => import('ldapts');
const TIMEOUT_MS = 5000;

type Partial = { url?: unknown; baseDN?: unknown; userFilter?: unknown; bindDN?: unknown; bindPassword?: unknown };

/**
 * Settings in priority order: the request's ldapConfig (only where the configuration allows
 * that server), the stored setting `ldap`, the environment, the config file.
 */
export async function ldapSettings(
  store: Store,
  env: NodeJS.ProcessEnv,
  fromConfig: LdapServerConfig | undefined,
  fromRequest: Partial | undefined,
): Promise<LdapSettings | undefined> {
  if (fromRequest) refuseUnlistedServer(fromRequest, fromConfig?.allowedRequestUrls ?? []);
  const [stored] = await store.find(SETTINGS, { where: { field: 'key', op: 'eq', value: 'ldap' }, limit: 1 });
  const sources: Partial[] = [
    fromRequest ?? {},
    (stored?.value as Partial | undefined) ?? {},
    { url: env.LDAP_URL, baseDN: env.LDAP_BASE_DN, userFilter: env.LDAP_USER_FILTER },
    { url: fromConfig?.url, baseDN: fromConfig?.baseDN, userFilter: fromConfig?.userFilter },
  ];
  const text = (value: unknown): value is string => typeof value === 'string' && value !== '';
  const pick = (key: keyof Partial) => sources.map((s) => s[key]).find(text);
  const urlSource = sources.find((s) => text(s.url));
  const baseDN = pick('baseDN');
  if (!urlSource || !baseDN) return undefined;
  const url = urlSource.url as string;
  if (!/^ldaps?:\/\//i.test(url))
    throw validationError(
      { 'ldapConfig.url': 'must start with ldap:// or ldaps://' },
      'LDAP url must start with ldap:// or ldaps://',
    );
  // A service account's password goes only to the server it was configured with.
  const bind = text(urlSource.bindDN)
    ? { bindDN: urlSource.bindDN, bindPassword: text(urlSource.bindPassword) ? urlSource.bindPassword : '' }
    : {};
  return { url, baseDN, userFilter: pick('userFilter') ?? DEFAULT_USER_FILTER, ...bind };
}

/** `ldap://Host/` and `ldap://host:389` are the same server. */
export function canonicalLdapUrl(url: string): string | undefined {
  const match = /^(ldaps?):\/\/([^/:?#]+|\[[^\]]+\])(?::(\d{1,5}))?\/?$/i.exec(url.trim());
  if (!match) return undefined;
  const scheme = match[1].toLowerCase();
  const port = match[3] ? Number(match[3]) : scheme === 'ldaps' ? 636 : 389;
  return `${scheme}://${match[2].toLowerCase()}:${port}`;
}

/** A login request may name only a server from the configured allowlist (none by default). */
function refuseUnlistedServer(fromRequest: Partial, allowed: string[]): void {
  if (allowed.length === 0) {
    throw validationError(
      { ldapConfig: 'is not accepted by this server; it uses its configured LDAP settings' },
      'ldapConfig is not accepted by this server',
    );
  }
  if (fromRequest.url === undefined) return;
  const wanted = typeof fromRequest.url === 'string' ? canonicalLdapUrl(fromRequest.url) : undefined;
  if (!wanted || !allowed.some((url) => canonicalLdapUrl(url) === wanted)) {
    throw validationError(
      { 'ldapConfig.url': 'is not one of the LDAP servers this server allows' },
      'ldapConfig.url is not an allowed LDAP server',
    );
  }
}

/** RFC 4515: `*`, `(`, `)`, backslash and NUL become \2a, \28, \29, \5c, \00 in a filter value. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (ch) => `\\${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export interface LdapIdentity {
  dn: string;
  email?: string;
  displayName?: string;
}

/** Finds the user's entry, then binds as it with the password; undefined when the credentials are wrong. */
export function ldapAuthenticate(
  settings: LdapSettings,
  username: string,
  password: string,
  /** The sign-in's span, when it is traced. */
  trace?: Context,
): Promise<LdapIdentity | undefined> {
  return inSpan(
    'ldap authenticate',
    {
      kind: SpanKind.CLIENT,
      attributes: { 'server.address': hostOf(settings.url), 'entigen.ldap.base_dn': settings.baseDN },
      parent: trace,
    },
    () => authenticate(settings, username, password),
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'unknown';
  }
}

async function authenticate(
  settings: LdapSettings,
  username: string,
  password: string,
): Promise<LdapIdentity | undefined> {
  // An empty password would be an unauthenticated bind, which many servers accept: refuse it.
  if (!username || !password) return undefined;
  const { Client, InvalidCredentialsError } = await ldapts();
  const client = new Client({ url: settings.url, timeout: TIMEOUT_MS, connectTimeout: TIMEOUT_MS });
  try {
    if (settings.bindDN) await client.bind(settings.bindDN, settings.bindPassword ?? '');
    const filter = settings.userFilter.replace(/\{username\}/g, escapeFilterValue(username));
    const { searchEntries } = await client.search(settings.baseDN, {
      scope: 'sub',
      filter,
      attributes: ['mail', 'cn', 'displayName'],
      sizeLimit: 2,
    });
    if (searchEntries.length !== 1) return undefined;
    const entry = searchEntries[0];
    await client.bind(entry.dn, password);
    const first = (value: unknown) => (Array.isArray(value) ? value[0] : value)?.toString();
    return { dn: entry.dn, email: first(entry.mail), displayName: first(entry.displayName) ?? first(entry.cn) };
  } catch (error) {
    if (error instanceof InvalidCredentialsError) return undefined;
    // The cause (socket details) is logged with the correlation id, never sent: no port probing.
    throw new ApiError('SERVICE_UNAVAILABLE', 'The LDAP server is unavailable', undefined, error);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** GET /auth/test-ldap: can the server be reached and bound (anonymously or as the service account)? */
export async function testLdap(settings: LdapSettings): Promise<{ ok: boolean; url: string; message: string }> {
  const { Client, InvalidCredentialsError } = await ldapts();
  const client = new Client({ url: settings.url, timeout: TIMEOUT_MS, connectTimeout: TIMEOUT_MS });
  let step = 'connect';
  try {
    await client.bind(settings.bindDN ?? '', settings.bindPassword ?? '');
    step = 'search';
    await client.search(settings.baseDN, { scope: 'base', filter: '(objectClass=*)', attributes: ['dn'] });
    return { ok: true, url: settings.url, message: `connected and searched ${settings.baseDN}` };
  } catch (error) {
    const refused = error instanceof InvalidCredentialsError;
    return { ok: false, url: settings.url, message: describeLdapFailure(step, error, refused) };
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** A fixed sentence per kind of failure: the operator learns what to fix, nobody learns socket details. */
function describeLdapFailure(step: string, error: unknown, refused: boolean): string {
  if (refused) return 'the server refused the bind credentials';
  if (step === 'search') return 'connected, but the base DN could not be searched';
  const code = (error as { code?: unknown })?.code;
  if (code === 'ETIMEDOUT' || /timeout/i.test((error as Error)?.message ?? ''))
    return 'the server did not answer in time';
  if (typeof code === 'string' && /^ERR_TLS|CERT|SSL/.test(code)) return 'the TLS handshake failed';
  return 'could not connect to the server';
}
