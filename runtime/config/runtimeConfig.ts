import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { type ScheduleType, scheduleProblem } from '../model/schedule.js';
import { DEFAULT_THUMBNAIL_SIZES, MAX_THUMBNAIL_SIZES, THUMBNAIL_SIZE_PATTERN } from '../model/thumbnails.js';
import { type CorsConfig, checkCorsConfig } from './corsConfig.js';

/** The server's own LDAP configuration (config file, environment). */
export interface LdapServerConfig {
  url?: string;
  baseDN?: string;
  userFilter?: string;
  /** Servers a login request's `ldapConfig` may name; empty or absent: `ldapConfig` is refused. */
  allowedRequestUrls?: string[];
}

/**
 * When the session cookie carries `Secure`: `always`, `never`, or `auto` (the default): when the
 * request came over HTTPS (directly, or through a trusted proxy's X-Forwarded-Proto), when the
 * public URL is https, and on loopback hosts, where browsers keep Secure cookies over plain HTTP.
 */
export type SecureCookies = 'auto' | 'always' | 'never';

/** Settings read at start from entigen.config.yaml; environment variables override them. */
export interface RuntimeConfig {
  sessionTtlMs: number;
  /**
   * Address verification: off (nothing sent), optional (registration mails a link; nothing
   * waits for it), required (an unverified user may sign in, but every call outside /auth
   * answers 403 EMAIL_NOT_VERIFIED until the link is used).
   */
  emailVerification: 'off' | 'optional' | 'required';
  passwordPolicy: { minLength: number; requireSpecial: boolean };
  ldap?: LdapServerConfig;
  /** OpenID Connect providers users may sign in with (GET /api/v1/auth/oidc/{name}/start). */
  oidc: OidcProviderConfig[];
  /** Plain OAuth2 providers (GitHub), on the same routes as the OpenID ones. */
  oauth2: OAuth2ProviderConfig[];
  /** Sign-in by a mailed link or six-digit code (POST /api/v1/auth/passwordless); both off by default. */
  passwordless: { link: boolean; code: boolean };
  /** Two-factor authentication (TOTP): the issuer authenticator apps show, roles that must enroll. */
  mfa: { issuer?: string; requiredFor: string[] };
  rateLimit: Record<'auth' | 'api' | 'public', { limit: number; window: number }>;
  server: {
    port: number;
    host: string;
    /**
     * Proxies whose X-Forwarded-For and X-Forwarded-Proto are believed: false (none), a hop count,
     * or addresses and CIDR ranges (also loopback, linklocal, uniquelocal). Express's `trust proxy`.
     */
    trustProxy: false | number | string[];
    /** gzip and brotli for JSON and text answers of 1 KB or more (off when a proxy in front compresses). */
    compression: boolean;
    /** Secure on the session cookie: auto (HTTPS, an https public URL or a loopback host), always, never. */
    cookies: { secure: SecureCookies };
    shutdownGraceMs: number;
    /** Where browsers reach this server (OIDC redirect URIs); none: the address it listens on. */
    publicUrl?: string;
    /** express (the default) or node: node:http serves the entity routes past Express's router. */
    adapter: 'express' | 'node';
  };
  jobs: { handlers?: string; maxSeriesPerJob: number };
  uploads: UploadsConfig;
  /** Scheduled backups (a job of the server's own); none: only `entigen backup`. */
  backups?: BackupsConfig;
  cors: CorsConfig;
  /** GET /api/metrics also answers this scrape token (besides administrators). */
  metrics: { token?: string };
  /**
   * afterCommit delivery: attempts before a delivery is failed, the first retry delay (doubling),
   * a hook's time limit, and how long an instance holds the log's cursor without renewing it.
   */
  hooks: { attempts: number; backoffMs: number; timeoutMs: number; leaseMs: number };
  /**
   * The event log: kept at least `retentionMs` (and while a consumer still needs it), and at
   * most `maxCount` events beyond that age limit (0: no count limit).
   */
  events: { retentionMs: number; maxCount: number };
  /** Server-Sent Events subscriptions (GET /api/v1/realtime). */
  realtime: RealtimeConfig;
  /** Outgoing webhooks (the built-in webhooks entity). */
  webhooks: WebhooksConfig;
  /**
   * Many instances: while the bus between them cannot prove that every notice arrived, no cached
   * session, role or count is kept longer than `maxStalenessMs`.
   */
  cluster: { maxStalenessMs: number };
  /** Outgoing mail (runtime/mail/). */
  mail: MailConfig;
}

export interface BackupsConfig {
  /** A five-field cron expression (in UTC) or an interval such as 6h. */
  schedule: string;
  scheduleType: ScheduleType;
  /** The newest backups kept in `to`; older ones are removed after each backup. */
  keep: number;
  /** A folder (relative to the project) or s3://bucket/prefix/. */
  to: string;
  /** A logical export even where the store has a file copy or pg_dump. */
  logical: boolean;
}

/** Media files: a folder (local, the default) or an S3-compatible bucket, and the thumbnail sizes served. */
export interface UploadsConfig {
  driver: 'local' | 's3';
  /** The folder of the local driver (relative to the project). */
  dir: string;
  maxBytes: number;
  /** The s3 driver's bucket and where to reach it; credentials from S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY. */
  s3?: S3Settings;
  thumbnails: { sizes: string[] };
}

/** An S3-compatible bucket and how to reach it. */
export interface S3Settings {
  bucket: string;
  /** An S3-compatible server's address (none: AWS itself, by region). */
  endpoint?: string;
  region: string;
  /** Keys begin with it (`media/`), so one bucket can hold several apps' files. */
  prefix: string;
  /** Path-style addresses (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
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

export interface MailConfig {
  /** SMTP server (smtp:// or smtps://, credentials in the URL); none: mail is written to the log. */
  url?: string;
  from: string;
  /** Base of the links mails carry (`<linkBase>/reset-password?token=...`); none: the token alone. */
  linkBase?: string;
  /** Attempts before a mail is failed; the first retry waits backoffMs, doubling. */
  attempts: number;
  backoffMs: number;
  /** How often the queue is read when nothing told it of a mail (other instances, retries). */
  pollMs: number;
  tls: { rejectUnauthorized: boolean; requireTLS: boolean };
}

export interface RealtimeConfig {
  /** Open streams one user may hold (one anonymous client per address counts as a user). */
  maxStreamsPerUser: number;
  /** Open streams one instance serves. */
  maxStreams: number;
  /** Events one stream is sent per second at most; more wait their turn. */
  eventsPerSecond: number;
  /** A comment line this often keeps proxies from closing an idle stream; credentials are checked again then. */
  heartbeatMs: number;
  /** How often the log is read when no notice arrives (commits on instances that cannot tell this one). */
  pollMs: number;
  /** A stream whose client has not taken its data for this long is closed (it resumes with Last-Event-ID). */
  slowConsumerMs: number;
}

export interface WebhooksConfig {
  /** Attempts of one delivery before it is failed (dead-lettered). */
  attempts: number;
  /** Delay before the first retry; it doubles with each attempt (with jitter), up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** A receiver that has not answered in this time fails the attempt. */
  timeoutMs: number;
  /** Targets on loopback, private, link-local or other non-public addresses are refused unless true. */
  allowPrivateTargets: boolean;
  /** How long an instance holds a webhook's delivery lease without renewing it. */
  leaseMs: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  const match = /^([1-9]\d*)(ms|s|m|h|d)$/.exec(text);
  if (!match) throw new Error(`invalid duration "${text}"; use a number and ms, s, m, h or d`);
  return Number(match[1]) * UNITS[match[2]];
}

/** `RATE_LIMIT_API=100/60`: limit per window of seconds. */
function tierFromEnv(value: string | undefined, name: string): { limit: number; window: number } | undefined {
  if (value === undefined || value === '') return undefined;
  const match = /^([1-9]\d*)\/([1-9]\d*)$/.exec(value.trim());
  if (!match) throw new Error(`${name} must look like 100/60 (requests per window of seconds), not "${value}"`);
  return { limit: Number(match[1]), window: Number(match[2]) };
}

/** LDAP_ALLOWED_REQUEST_URLS (comma-separated) replaces auth.ldap.allowedRequestUrls. */
function ldapConfig(raw: LdapServerConfig | undefined, env: NodeJS.ProcessEnv): LdapServerConfig {
  const fromEnv = env.LDAP_ALLOWED_REQUEST_URLS?.split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  return { ...raw, allowedRequestUrls: fromEnv ?? raw?.allowedRequestUrls ?? [] };
}

/** CORS_ORIGINS (comma-separated) and CORS_CREDENTIALS (true/false) replace the config's `cors`. */
function corsConfig(raw: Partial<CorsConfig> | undefined, env: NodeJS.ProcessEnv): CorsConfig {
  const origins =
    env.CORS_ORIGINS !== undefined
      ? env.CORS_ORIGINS.split(',')
          .map((o) => o.trim())
          .filter(Boolean)
      : (raw?.origins ?? []);
  if (env.CORS_CREDENTIALS !== undefined && !['true', 'false'].includes(env.CORS_CREDENTIALS))
    throw new Error(`CORS_CREDENTIALS must be true or false, not "${env.CORS_CREDENTIALS}"`);
  const credentials =
    env.CORS_CREDENTIALS !== undefined ? env.CORS_CREDENTIALS === 'true' : (raw?.credentials ?? false);
  const config = { origins, credentials, maxAge: raw?.maxAge ?? 600 };
  checkCorsConfig(config);
  return config;
}

/** A scrape token must be hard to guess: at least 16 characters. */
function metricsToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined;
  if (token.length < 16) throw new Error('METRICS_TOKEN (metrics.token) must be at least 16 characters');
  return token;
}

/** The project's config with defaults filled in; `entigen build` has already checked its shape. */
export function loadRuntimeConfig(root: string, env: NodeJS.ProcessEnv): RuntimeConfig {
  const path = join(root, 'entigen.config.yaml');
  return runtimeConfig((existsSync(path) ? parse(readFileSync(path, 'utf8')) : {}) ?? {}, env);
}

/**
 * The config read from its file (already checked against the config schema), with the
 * environment's overrides and defaults filled in.
 */
// biome-ignore lint/suspicious/noExplicitAny: the file's shape is the config schema's, checked before
export function runtimeConfig(raw: any, env: NodeJS.ProcessEnv): RuntimeConfig {
  const port = env.PORT ? Number(env.PORT) : (raw.server?.port ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be an integer from 0 to 65535, not ${env.PORT}`);
  return {
    sessionTtlMs: parseDuration(env.SESSION_TTL ?? raw.auth?.sessionTtl ?? '7d'),
    emailVerification: emailVerification(env.EMAIL_VERIFICATION ?? raw.auth?.emailVerification),
    passwordPolicy: {
      minLength: raw.auth?.passwordPolicy?.minLength ?? 8,
      requireSpecial: raw.auth?.passwordPolicy?.requireSpecial ?? false,
    },
    ldap: ldapConfig(raw.auth?.ldap, env),
    oidc: oidcProviders(raw.auth?.oidc, env),
    oauth2: oauth2Providers(raw.auth?.oauth2, env, raw.auth?.oidc ?? []),
    passwordless: { link: raw.auth?.passwordless?.link === true, code: raw.auth?.passwordless?.code === true },
    mfa: { issuer: raw.auth?.mfa?.issuer, requiredFor: raw.auth?.mfa?.requiredFor ?? [] },
    rateLimit: {
      auth: tierFromEnv(env.RATE_LIMIT_AUTH, 'RATE_LIMIT_AUTH') ?? raw.rateLimit?.auth ?? { limit: 20, window: 60 },
      api: tierFromEnv(env.RATE_LIMIT_API, 'RATE_LIMIT_API') ?? raw.rateLimit?.api ?? { limit: 100, window: 60 },
      public: tierFromEnv(env.RATE_LIMIT_PUBLIC, 'RATE_LIMIT_PUBLIC') ??
        raw.rateLimit?.public ?? { limit: 60, window: 60 },
    },
    server: {
      port,
      host: env.HOST ?? raw.server?.host ?? '0.0.0.0',
      trustProxy: trustProxy(env.TRUST_PROXY ?? raw.server?.trustProxy),
      compression: booleanFromEnv(env.COMPRESSION, 'COMPRESSION') ?? raw.server?.compression ?? true,
      cookies: { secure: secureCookies(env.COOKIE_SECURE || raw.server?.cookies?.secure || 'auto') },
      shutdownGraceMs: raw.server?.shutdownGraceMs ?? 10_000,
      publicUrl: publicUrl(env.PUBLIC_URL || raw.server?.publicUrl || undefined),
      adapter: httpAdapter(env.HTTP_ADAPTER || raw.server?.adapter || 'express'),
    },
    jobs: { handlers: raw.jobs?.handlers, maxSeriesPerJob: raw.jobs?.maxSeriesPerJob ?? 100 },
    uploads: uploadsConfig(raw.uploads, env),
    backups: backupsConfig(raw.backups),
    cors: corsConfig(raw.cors, env),
    metrics: { token: metricsToken(env.METRICS_TOKEN ?? raw.metrics?.token) },
    hooks: {
      attempts: raw.hooks?.attempts ?? 5,
      backoffMs: parseDuration(raw.hooks?.backoff ?? '10s'),
      timeoutMs: parseDuration(raw.hooks?.timeout ?? '30s'),
      leaseMs: parseDuration(raw.hooks?.lease ?? '30s'),
    },
    events: {
      retentionMs: parseDuration(raw.events?.retention ?? '7d'),
      maxCount: raw.events?.maxCount ?? 1_000_000,
    },
    realtime: {
      maxStreamsPerUser: raw.realtime?.maxStreamsPerUser ?? 10,
      maxStreams: raw.realtime?.maxStreams ?? 5000,
      eventsPerSecond: raw.realtime?.eventsPerSecond ?? 200,
      heartbeatMs: parseDuration(raw.realtime?.heartbeat ?? '15s'),
      pollMs: parseDuration(raw.realtime?.poll ?? '1s'),
      slowConsumerMs: parseDuration(raw.realtime?.slowConsumerTimeout ?? '30s'),
    },
    webhooks: {
      attempts: raw.webhooks?.attempts ?? 12,
      backoffMs: parseDuration(raw.webhooks?.backoff ?? '1m'),
      maxBackoffMs: parseDuration(raw.webhooks?.maxBackoff ?? '8h'),
      timeoutMs: parseDuration(raw.webhooks?.timeout ?? '10s'),
      allowPrivateTargets:
        booleanFromEnv(env.WEBHOOKS_ALLOW_PRIVATE_TARGETS, 'WEBHOOKS_ALLOW_PRIVATE_TARGETS') ??
        raw.webhooks?.allowPrivateTargets ??
        false,
      leaseMs: parseDuration(raw.webhooks?.lease ?? '30s'),
    },
    mail: mailConfig(raw.mail, env),
    cluster: { maxStalenessMs: maxStaleness(env.CLUSTER_MAX_STALENESS || raw.cluster?.maxStaleness || '1s') },
  };
}

interface RawUploads {
  driver?: string;
  dir?: string;
  maxBytes?: number;
  bucket?: string;
  endpoint?: string;
  region?: string;
  prefix?: string;
  forcePathStyle?: boolean;
  thumbnails?: { sizes?: string[] };
}

interface RawBackups {
  schedule?: string;
  keep?: number;
  to?: string;
  logical?: boolean;
}

function backupsConfig(raw: RawBackups | undefined): BackupsConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  const schedule = String(raw.schedule ?? '');
  const scheduleType: ScheduleType = /^\d+[smh]$/.test(schedule) ? 'interval' : 'cron';
  const problem = scheduleProblem(scheduleType, schedule);
  if (problem) throw new Error(`backups.schedule: ${problem} (or an interval such as 6h)`);
  const keep = raw.keep ?? 7;
  if (!Number.isInteger(keep) || keep < 1 || keep > 10_000)
    throw new Error('backups.keep must be a whole number from 1 to 10000');
  return { schedule, scheduleType, keep, to: raw.to ?? 'backups/', logical: raw.logical ?? false };
}

/** UPLOADS_DRIVER and the S3_* variables override the config's `uploads`. */
function uploadsConfig(raw: RawUploads | undefined, env: NodeJS.ProcessEnv): UploadsConfig {
  const driver = env.UPLOADS_DRIVER || raw?.driver || 'local';
  if (driver !== 'local' && driver !== 's3')
    throw new Error(`UPLOADS_DRIVER (uploads.driver) must be local or s3, not "${driver}"`);
  const sizes = raw?.thumbnails?.sizes ?? DEFAULT_THUMBNAIL_SIZES;
  if (sizes.length > MAX_THUMBNAIL_SIZES || !sizes.every((size) => THUMBNAIL_SIZE_PATTERN.test(size)))
    throw new Error(
      `uploads.thumbnails.sizes must be at most ${MAX_THUMBNAIL_SIZES} sizes like 200x200 (1 to 4000 pixels a side)`,
    );
  const config: UploadsConfig = {
    driver,
    dir: env.UPLOADS_DIR || raw?.dir || 'data/uploads',
    maxBytes: raw?.maxBytes ?? 10 * 1024 * 1024,
    thumbnails: { sizes: [...new Set(sizes)] },
  };
  if (driver === 'local') return config;
  const bucket = env.S3_BUCKET || raw?.bucket;
  if (!bucket) throw new Error('uploads.driver s3 needs a bucket (uploads.bucket or S3_BUCKET)');
  const endpoint = env.S3_ENDPOINT || raw?.endpoint || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(endpoint))
    throw new Error('S3_ENDPOINT (uploads.endpoint) must be an http:// or https:// address without a path');
  const prefix = env.S3_PREFIX ?? raw?.prefix ?? '';
  if (!/^([\w.-]+\/)*$/.test(prefix))
    throw new Error('S3_PREFIX (uploads.prefix) must be empty or folder names ending in /, like media/');
  return {
    ...config,
    s3: {
      bucket,
      endpoint,
      region: env.S3_REGION || raw?.region || 'us-east-1',
      prefix,
      forcePathStyle:
        booleanFromEnv(env.S3_FORCE_PATH_STYLE, 'S3_FORCE_PATH_STYLE') ?? raw?.forcePathStyle ?? endpoint !== undefined,
      accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
    },
  };
}

/** Between 50 ms (pulses four times as often) and one minute. */
function maxStaleness(text: string): number {
  const ms = parseDuration(text);
  if (ms < 50 || ms > 60_000)
    throw new Error(`CLUSTER_MAX_STALENESS (cluster.maxStaleness) must be from 50ms to 1m, not "${text}"`);
  return ms;
}

function emailVerification(value: string | undefined): RuntimeConfig['emailVerification'] {
  if (value === undefined || value === '') return 'off';
  if (value !== 'off' && value !== 'optional' && value !== 'required')
    throw new Error(`EMAIL_VERIFICATION (auth.emailVerification) must be off, optional or required, not "${value}"`);
  return value;
}

/** MAIL_URL, MAIL_FROM and MAIL_LINK_BASE override the config's `mail`. */
interface RawMail {
  url?: string;
  from?: string;
  linkBase?: string;
  attempts?: number;
  backoff?: string;
  poll?: string;
  tls?: { rejectUnauthorized?: boolean; requireTLS?: boolean };
}

function mailConfig(raw: RawMail | undefined, env: NodeJS.ProcessEnv): MailConfig {
  const url = env.MAIL_URL || raw?.url || undefined;
  if (url !== undefined && !/^smtps?:\/\/./.test(url))
    throw new Error('MAIL_URL (mail.url) must be an smtp:// or smtps:// URL');
  const linkBase = (env.MAIL_LINK_BASE || raw?.linkBase || undefined)?.replace(/\/+$/, '');
  if (linkBase !== undefined && !/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(linkBase))
    throw new Error('MAIL_LINK_BASE (mail.linkBase) must be an http:// or https:// URL without query or fragment');
  return {
    url,
    from: env.MAIL_FROM || raw?.from || 'entigen <no-reply@localhost>',
    linkBase,
    attempts: raw?.attempts ?? 8,
    backoffMs: parseDuration(raw?.backoff ?? '30s'),
    pollMs: parseDuration(raw?.poll ?? '5s'),
    tls: { rejectUnauthorized: raw?.tls?.rejectUnauthorized ?? true, requireTLS: raw?.tls?.requireTLS ?? false },
  };
}

/**
 * TRUST_PROXY: `false`, a hop count (`1`: the one proxy in front), or comma-separated addresses,
 * CIDR ranges and the names loopback, linklocal, uniquelocal. `true` is refused: it would believe
 * any client's X-Forwarded-For, so anyone could pick the address rate limits and logs see.
 */
export function trustProxy(value: unknown): RuntimeConfig['server']['trustProxy'] {
  if (value === undefined || value === null || value === false || value === '' || value === 'false') return false;
  const refuse = (): never => {
    throw new Error(
      `TRUST_PROXY (server.trustProxy) must be false, a hop count, or proxy addresses and CIDR ranges (or loopback, linklocal, uniquelocal), not ${JSON.stringify(value)}`,
    );
  };
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value.trim()))) {
    const hops = Number(value);
    if (!Number.isInteger(hops) || hops < 0 || hops > 100) refuse();
    return hops === 0 ? false : hops;
  }
  const entries = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : refuse();
  const list = entries.map((entry) => (typeof entry === 'string' ? entry.trim() : refuse())).filter(Boolean);
  if (list.length === 0 || !list.every(isProxyAddress)) refuse();
  return list;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyAddress(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

function secureCookies(value: string): SecureCookies {
  if (value !== 'auto' && value !== 'always' && value !== 'never')
    throw new Error(`COOKIE_SECURE (server.cookies.secure) must be auto, always or never, not "${value}"`);
  return value;
}

function httpAdapter(value: string): RuntimeConfig['server']['adapter'] {
  if (value !== 'express' && value !== 'node')
    throw new Error(`HTTP_ADAPTER (server.adapter) must be express or node, not "${value}"`);
  return value;
}

function publicUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(url))
    throw new Error('PUBLIC_URL (server.publicUrl) must be an http:// or https:// URL without query or fragment');
  return url.replace(/\/+$/, '');
}

type RawOidc = Partial<Omit<OidcProviderConfig, 'roles' | 'scopes'>> & {
  clientSecretEnv?: string;
  roles?: string[];
  scopes?: string[];
};

/** The secret comes from the environment: `clientSecretEnv`, else OIDC_<NAME>_CLIENT_SECRET, else the file. */
function oidcProviders(raw: RawOidc[] | undefined, env: NodeJS.ProcessEnv): OidcProviderConfig[] {
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
function oauth2Providers(
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

function booleanFromEnv(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  if (value !== 'true' && value !== 'false') throw new Error(`${name} must be true or false, not "${value}"`);
  return value === 'true';
}
