import { Client, InvalidCredentialsError } from 'ldapts';
import { ApiError } from '../http/errors.js';
import type { Store } from '../store/types.js';

export interface LdapSettings {
  url: string;
  baseDN: string;
  userFilter: string;
  /** Optional service account for the user search; otherwise the search binds anonymously. */
  bindDN?: string;
  bindPassword?: string;
}

export const DEFAULT_USER_FILTER = '(uid={username})';
const TIMEOUT_MS = 5000;

type Partial = { url?: unknown; baseDN?: unknown; userFilter?: unknown; bindDN?: unknown; bindPassword?: unknown };

/** Settings in priority order: the request's ldapConfig, the stored setting `ldap`, the environment, the config file. */
export async function ldapSettings(
  store: Store,
  env: NodeJS.ProcessEnv,
  fromConfig: Partial | undefined,
  fromRequest: Partial | undefined,
): Promise<LdapSettings | undefined> {
  const [stored] = await store.find('settings', { where: { field: 'key', op: 'eq', value: 'ldap' }, limit: 1 });
  const sources: Partial[] = [
    fromRequest ?? {},
    (stored?.value as Partial | undefined) ?? {},
    { url: env.LDAP_URL, baseDN: env.LDAP_BASE_DN, userFilter: env.LDAP_USER_FILTER },
    fromConfig ?? {},
  ];
  const pick = (key: keyof Partial) => sources.map((s) => s[key]).find((v): v is string => typeof v === 'string' && v !== '');
  const url = pick('url');
  const baseDN = pick('baseDN');
  if (!url || !baseDN) return undefined;
  if (!/^ldaps?:\/\//i.test(url)) throw new ApiError('VALIDATION_ERROR', 'LDAP url must start with ldap:// or ldaps://', { 'ldapConfig.url': 'must start with ldap:// or ldaps://' });
  return { url, baseDN, userFilter: pick('userFilter') ?? DEFAULT_USER_FILTER, bindDN: pick('bindDN'), bindPassword: pick('bindPassword') };
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
export async function ldapAuthenticate(settings: LdapSettings, username: string, password: string): Promise<LdapIdentity | undefined> {
  // An empty password would be an unauthenticated bind, which many servers accept: refuse it.
  if (!username || !password) return undefined;
  const client = new Client({ url: settings.url, timeout: TIMEOUT_MS, connectTimeout: TIMEOUT_MS });
  try {
    if (settings.bindDN) await client.bind(settings.bindDN, settings.bindPassword ?? '');
    const filter = settings.userFilter.replace(/\{username\}/g, escapeFilterValue(username));
    const { searchEntries } = await client.search(settings.baseDN, { scope: 'sub', filter, attributes: ['mail', 'cn', 'displayName'], sizeLimit: 2 });
    if (searchEntries.length !== 1) return undefined;
    const entry = searchEntries[0];
    await client.bind(entry.dn, password);
    const first = (value: unknown) => (Array.isArray(value) ? value[0] : value)?.toString();
    return { dn: entry.dn, email: first(entry.mail), displayName: first(entry.displayName) ?? first(entry.cn) };
  } catch (error) {
    if (error instanceof InvalidCredentialsError) return undefined;
    throw unreachable(settings, error);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** GET /auth/test-ldap: can the server be reached and bound (anonymously or as the service account)? */
export async function testLdap(settings: LdapSettings): Promise<{ ok: boolean; url: string; message: string }> {
  const client = new Client({ url: settings.url, timeout: TIMEOUT_MS, connectTimeout: TIMEOUT_MS });
  try {
    await client.bind(settings.bindDN ?? '', settings.bindPassword ?? '');
    await client.search(settings.baseDN, { scope: 'base', filter: '(objectClass=*)', attributes: ['dn'] });
    return { ok: true, url: settings.url, message: `connected and searched ${settings.baseDN}` };
  } catch (error) {
    return { ok: false, url: settings.url, message: (error as Error).message };
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

function unreachable(settings: LdapSettings, error: unknown): ApiError {
  const message = (error as Error)?.message ?? String(error);
  return new ApiError('SERVICE_UNAVAILABLE', `LDAP server ${settings.url} is unavailable: ${message}`);
}
