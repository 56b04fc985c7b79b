import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { booleanFromEnv, parseDuration } from './configValues.js';
import type { CorsConfig } from './corsConfig.js';
import {
  type BackupsConfig,
  backupsConfig,
  type MailConfig,
  type McpConfig,
  mailConfig,
  type RealtimeConfig,
  type UploadsConfig,
  uploadsConfig,
  type WebhooksConfig,
} from './featureConfig.js';
import {
  emailVerification,
  type LdapServerConfig,
  ldapConfig,
  type OAuth2ProviderConfig,
  type OidcProviderConfig,
  oauth2Providers,
  oidcProviders,
} from './identityConfig.js';
import {
  corsConfig,
  httpAdapter,
  maxStaleness,
  metricsToken,
  publicUrl,
  type SecureCookies,
  secureCookies,
  tierFromEnv,
  trustProxy,
} from './serverConfig.js';

export { parseDuration } from './configValues.js';
export type {
  BackupsConfig,
  MailConfig,
  McpConfig,
  RealtimeConfig,
  S3Settings,
  UploadsConfig,
  WebhooksConfig,
} from './featureConfig.js';
export type { LdapServerConfig, OAuth2ProviderConfig, OidcProviderConfig } from './identityConfig.js';
export { type SecureCookies, trustProxy } from './serverConfig.js';

/** The MCP tier's default: 60 requests a minute per credential. */
export const MCP_TIER = { limit: 60, window: 60 };

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
  /** Requests per window, per tier; `mcp` falls back to MCP_TIER where a caller of the runtime leaves it out. */
  rateLimit: Record<'auth' | 'api' | 'public', { limit: number; window: number }> & {
    mcp?: { limit: number; window: number };
  };
  /** The MCP server for AI agents (POST/GET/DELETE /mcp); off unless enabled. */
  mcp: McpConfig;
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
  /** OpenTelemetry traces over OTLP/HTTP; the OTEL_* environment variables override it. */
  telemetry: { endpoint?: string; protocol?: string; sampleRatio?: number };
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

/** The project's config with defaults filled in; `entigen build` has already checked its shape. */
export function loadRuntimeConfig(root: string, env: NodeJS.ProcessEnv): RuntimeConfig {
  const path = join(root, 'entigen.config.yaml');
  return runtimeConfig((existsSync(path) ? parse(readFileSync(path, 'utf8')) : {}) ?? {}, env);
}

/** The file's data: its shape is the config schema's, checked before it gets here. */
// biome-ignore lint/suspicious/noExplicitAny: the schema, not this type, describes the file
type RawConfig = any;

/** How each part of the config is read: from its section of the file and the environment. */
type Sections = { [K in keyof RuntimeConfig]-?: (raw: RawConfig, env: NodeJS.ProcessEnv) => RuntimeConfig[K] };

const SECTIONS: Sections = {
  server: (raw, env) => {
    const port = env.PORT ? Number(env.PORT) : (raw.server?.port ?? 3000);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`PORT must be an integer from 0 to 65535, not ${env.PORT}`);
    return {
      port,
      host: env.HOST ?? raw.server?.host ?? '0.0.0.0',
      trustProxy: trustProxy(env.TRUST_PROXY ?? raw.server?.trustProxy),
      compression: booleanFromEnv(env.COMPRESSION, 'COMPRESSION') ?? raw.server?.compression ?? true,
      cookies: { secure: secureCookies(env.COOKIE_SECURE || raw.server?.cookies?.secure || 'auto') },
      shutdownGraceMs: raw.server?.shutdownGraceMs ?? 10_000,
      publicUrl: publicUrl(env.PUBLIC_URL || raw.server?.publicUrl || undefined),
      adapter: httpAdapter(env.HTTP_ADAPTER || raw.server?.adapter || 'express'),
    };
  },
  sessionTtlMs: (raw, env) => parseDuration(env.SESSION_TTL ?? raw.auth?.sessionTtl ?? '7d'),
  emailVerification: (raw, env) => emailVerification(env.EMAIL_VERIFICATION ?? raw.auth?.emailVerification),
  passwordPolicy: (raw) => ({
    minLength: raw.auth?.passwordPolicy?.minLength ?? 8,
    requireSpecial: raw.auth?.passwordPolicy?.requireSpecial ?? false,
  }),
  ldap: (raw, env) => ldapConfig(raw.auth?.ldap, env),
  oidc: (raw, env) => oidcProviders(raw.auth?.oidc, env),
  oauth2: (raw, env) => oauth2Providers(raw.auth?.oauth2, env, raw.auth?.oidc ?? []),
  passwordless: (raw) => ({
    link: raw.auth?.passwordless?.link === true,
    code: raw.auth?.passwordless?.code === true,
  }),
  mfa: (raw) => ({ issuer: raw.auth?.mfa?.issuer, requiredFor: raw.auth?.mfa?.requiredFor ?? [] }),
  rateLimit: (raw, env) => ({
    auth: tierFromEnv(env.RATE_LIMIT_AUTH, 'RATE_LIMIT_AUTH') ?? raw.rateLimit?.auth ?? { limit: 20, window: 60 },
    api: tierFromEnv(env.RATE_LIMIT_API, 'RATE_LIMIT_API') ?? raw.rateLimit?.api ?? { limit: 100, window: 60 },
    public: tierFromEnv(env.RATE_LIMIT_PUBLIC, 'RATE_LIMIT_PUBLIC') ??
      raw.rateLimit?.public ?? { limit: 60, window: 60 },
    mcp: tierFromEnv(env.RATE_LIMIT_MCP, 'RATE_LIMIT_MCP') ?? raw.rateLimit?.mcp ?? MCP_TIER,
  }),
  mcp: (raw) => ({
    enabled: raw.mcp?.enabled ?? false,
    readOnly: raw.mcp?.readOnly ?? true,
    allowDelete: raw.mcp?.allowDelete ?? false,
    allowedOrigins: raw.mcp?.allowedOrigins ?? [],
  }),
  jobs: (raw) => ({ handlers: raw.jobs?.handlers, maxSeriesPerJob: raw.jobs?.maxSeriesPerJob ?? 100 }),
  uploads: (raw, env) => uploadsConfig(raw.uploads, env),
  backups: (raw) => backupsConfig(raw.backups),
  cors: (raw, env) => corsConfig(raw.cors, env),
  metrics: (raw, env) => ({ token: metricsToken(env.METRICS_TOKEN ?? raw.metrics?.token) }),
  telemetry: (raw) => ({
    ...(raw.telemetry?.endpoint ? { endpoint: raw.telemetry.endpoint } : {}),
    ...(raw.telemetry?.protocol ? { protocol: raw.telemetry.protocol } : {}),
    ...(raw.telemetry?.sampleRatio !== undefined ? { sampleRatio: raw.telemetry.sampleRatio } : {}),
  }),
  hooks: (raw) => ({
    attempts: raw.hooks?.attempts ?? 5,
    backoffMs: parseDuration(raw.hooks?.backoff ?? '10s'),
    timeoutMs: parseDuration(raw.hooks?.timeout ?? '30s'),
    leaseMs: parseDuration(raw.hooks?.lease ?? '30s'),
  }),
  events: (raw) => ({
    retentionMs: parseDuration(raw.events?.retention ?? '7d'),
    maxCount: raw.events?.maxCount ?? 1_000_000,
  }),
  realtime: (raw) => ({
    maxStreamsPerUser: raw.realtime?.maxStreamsPerUser ?? 10,
    maxStreams: raw.realtime?.maxStreams ?? 5000,
    eventsPerSecond: raw.realtime?.eventsPerSecond ?? 200,
    heartbeatMs: parseDuration(raw.realtime?.heartbeat ?? '15s'),
    pollMs: parseDuration(raw.realtime?.poll ?? '1s'),
    slowConsumerMs: parseDuration(raw.realtime?.slowConsumerTimeout ?? '30s'),
  }),
  webhooks: (raw, env) => ({
    attempts: raw.webhooks?.attempts ?? 12,
    backoffMs: parseDuration(raw.webhooks?.backoff ?? '1m'),
    maxBackoffMs: parseDuration(raw.webhooks?.maxBackoff ?? '8h'),
    timeoutMs: parseDuration(raw.webhooks?.timeout ?? '10s'),
    allowPrivateTargets:
      booleanFromEnv(env.WEBHOOKS_ALLOW_PRIVATE_TARGETS, 'WEBHOOKS_ALLOW_PRIVATE_TARGETS') ??
      raw.webhooks?.allowPrivateTargets ??
      false,
    leaseMs: parseDuration(raw.webhooks?.lease ?? '30s'),
  }),
  mail: (raw, env) => mailConfig(raw.mail, env),
  cluster: (raw, env) => ({
    maxStalenessMs: maxStaleness(env.CLUSTER_MAX_STALENESS || raw.cluster?.maxStaleness || '1s'),
  }),
};

/**
 * The config read from its file (already checked against the config schema), with the
 * environment's overrides and defaults filled in: each section read in turn.
 */
export function runtimeConfig(raw: RawConfig, env: NodeJS.ProcessEnv): RuntimeConfig {
  return Object.fromEntries(
    Object.entries(SECTIONS).map(([key, read]) => [key, read(raw ?? {}, env)]),
  ) as unknown as RuntimeConfig;
}
