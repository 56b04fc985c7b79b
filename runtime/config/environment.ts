/**
 * An environment variable entigen reads, with what it does. The server's own are listed here;
 * each feature lists its own (runtime/server/features.ts), and runtime/server/environment.ts
 * puts them together: the reference page of the documentation is written from that table, and a
 * test fails when the code reads a variable that is not in it.
 */
export interface EnvironmentVariable {
  name: string;
  /** What it sets, in a sentence or two. */
  description: string;
  /** What applies without it. */
  default?: string;
  /** The entigen.config.yaml key it overrides. */
  configKey?: string;
  /** Where it belongs on the reference page. */
  group: 'server' | 'store' | 'secrets' | 'identity' | 'mail' | 'limits' | 'cluster' | 'logs' | 'operations';
}

/** The groups of the reference page, in its order, with their headings. */
export const ENVIRONMENT_GROUPS: Record<EnvironmentVariable['group'], string> = {
  server: 'Server',
  store: 'Store',
  secrets: 'Secrets',
  identity: 'Identity',
  mail: 'Mail',
  limits: 'Limits',
  cluster: 'Many instances',
  logs: 'Logs',
  operations: 'Operations',
};

/** The variables of the server itself, whatever features the app has. */
export const SERVER_VARIABLES: readonly EnvironmentVariable[] = [
  {
    name: 'DATABASE_URL',
    group: 'store',
    description:
      'The store: `sqlite:PATH`, `sqlite::memory:`, `postgres://user@host:5432/db` (add `?schema=NAME` to keep the app in a schema of its own) or `mongodb://...`.',
    default: 'embedded SQLite at `data/entigen.db`',
  },
  {
    name: 'DATABASE_POOL_MAX',
    group: 'store',
    description: 'Connections in the PostgreSQL or MongoDB pool.',
    default: '10',
  },
  {
    name: 'ENTIGEN_COUNT_CACHE',
    group: 'store',
    description:
      '`on` or `off`: whether exact counts, aggregations, pages of lists (as ids), the ids rules through references reach and session callers are remembered until the next write. On by default where every write can be heard, whoever makes it: SQLite, PostgreSQL, and MongoDB deployments with change streams (replica sets, sharded clusters). `on` turns it on for a single server that is the only writer of a standalone MongoDB database.',
  },
  { name: 'PORT', group: 'server', description: 'The port to listen on.', default: '3000', configKey: 'server.port' },
  {
    name: 'HOST',
    group: 'server',
    description: 'The address to listen on.',
    default: '0.0.0.0',
    configKey: 'server.host',
  },
  {
    name: 'PUBLIC_URL',
    group: 'server',
    description: 'The address users reach the server at, for links and OpenID Connect redirects.',
    configKey: 'server.publicUrl',
  },
  {
    name: 'HTTP_ADAPTER',
    group: 'server',
    description: 'The HTTP layer: `express` or `node` (node:http directly).',
    default: 'express',
    configKey: 'server.adapter',
  },
  {
    name: 'TRUST_PROXY',
    group: 'server',
    description:
      "The proxies in front whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed: a hop count (`1`) or comma-separated addresses and CIDR ranges (`10.0.0.0/8,loopback`). Unset, the client address for rate limits, logs and audit is the socket's, and the scheme is the connection's.",
    default: 'false',
    configKey: 'server.trustProxy',
  },
  {
    name: 'COMPRESSION',
    group: 'server',
    description:
      '`true` or `false`: gzip and brotli for JSON and text answers of 1 KB or more. Turn it off when a proxy in front compresses.',
    default: 'true',
    configKey: 'server.compression',
  },
  {
    name: 'COOKIE_SECURE',
    group: 'server',
    description:
      '`Secure` on the session cookie: `auto` (when the request is HTTPS, directly or through a trusted proxy, when the public URL is https, and on loopback hosts), `always` or `never`.',
    default: 'auto',
    configKey: 'server.cookies.secure',
  },
  {
    name: 'CORS_ORIGINS',
    group: 'server',
    description: 'Browser origins allowed to call the API, comma-separated.',
    configKey: 'cors.origins',
  },
  {
    name: 'CORS_CREDENTIALS',
    group: 'server',
    description: '`true` or `false`: whether those origins may send credentials.',
    default: 'false',
    configKey: 'cors.credentials',
  },
  {
    name: 'NODE_ENV',
    group: 'server',
    description:
      '`production` refuses to start without `SESSION_SECRET` and `APP_ENCRYPTION_KEY` or without `DATABASE_URL`, and makes logs JSON; otherwise development secrets are generated into `data/secrets.json`.',
  },
  {
    name: 'SESSION_SECRET',
    group: 'secrets',
    description: 'Signs session tokens and list cursors.',
    default: '`APP_ENCRYPTION_KEY`',
  },
  {
    name: 'APP_ENCRYPTION_KEY',
    group: 'secrets',
    description: 'The AES-256-GCM key of `encryptedKey` fields. Without it, their values cannot be read again.',
  },
  {
    name: 'SESSION_TTL',
    group: 'identity',
    description: 'How long a session lasts (a duration such as `12h`).',
    default: '7d',
    configKey: 'auth.sessionTtl',
  },
  {
    name: 'EMAIL_VERIFICATION',
    group: 'identity',
    description: '`off`, `optional` or `required`.',
    default: 'off',
    configKey: 'auth.emailVerification',
  },
  {
    name: 'ENTIGEN_ADMIN_EMAIL',
    group: 'identity',
    description: 'With `ENTIGEN_ADMIN_PASSWORD`: create the first administrator at start when none exists.',
  },
  { name: 'ENTIGEN_ADMIN_PASSWORD', group: 'identity', description: "The first administrator's password." },
  {
    name: 'ENTIGEN_ADMIN_NAME',
    group: 'identity',
    description: "The first administrator's display name.",
    default: 'Administrator',
  },
  {
    name: 'ENTIGEN_ADMIN_TENANT',
    group: 'identity',
    description: 'The name of the first tenant, when tenancy is configured.',
    default: 'Default',
  },
  {
    name: 'LDAP_URL',
    group: 'identity',
    description: "The LDAP directory's URL, below one set in the admin console and above the config's.",
    configKey: 'auth.ldap.url',
  },
  {
    name: 'LDAP_BASE_DN',
    group: 'identity',
    description: 'Where LDAP users are searched.',
    configKey: 'auth.ldap.baseDN',
  },
  {
    name: 'LDAP_USER_FILTER',
    group: 'identity',
    description: 'The LDAP search filter; `{username}` is the login name.',
    configKey: 'auth.ldap.userFilter',
  },
  {
    name: 'LDAP_ALLOWED_REQUEST_URLS',
    group: 'identity',
    description: "LDAP servers a login request's `ldapConfig` may name, comma-separated.",
    default: 'none',
    configKey: 'auth.ldap.allowedRequestUrls',
  },
  {
    name: 'OIDC_<NAME>_CLIENT_SECRET',
    group: 'identity',
    description:
      'The client secret of the OpenID provider `<NAME>` (its name upper-cased, `-` as `_`), unless the provider names another variable with `clientSecretEnv`.',
    configKey: 'auth.oidc[].clientSecret',
  },
  {
    name: 'MAIL_URL',
    group: 'mail',
    description: 'The SMTP server: `smtp://user:pass@host:587` (STARTTLS) or `smtps://...:465`. Unset, mail is logged.',
    configKey: 'mail.url',
  },
  { name: 'MAIL_FROM', group: 'mail', description: 'The sender of mails.', configKey: 'mail.from' },
  {
    name: 'MAIL_LINK_BASE',
    group: 'mail',
    description: "The base of links in mails: your front end's address.",
    configKey: 'mail.linkBase',
  },
  {
    name: 'RATE_LIMIT_AUTH',
    group: 'limits',
    description: 'The auth tier as `limit/windowSeconds`, for example `20/60`.',
    configKey: 'rateLimit.auth',
  },
  {
    name: 'RATE_LIMIT_API',
    group: 'limits',
    description: 'The api tier as `limit/windowSeconds`.',
    configKey: 'rateLimit.api',
  },
  {
    name: 'RATE_LIMIT_PUBLIC',
    group: 'limits',
    description: 'The public tier as `limit/windowSeconds`.',
    configKey: 'rateLimit.public',
  },
  {
    name: 'RATE_LIMIT_MCP',
    group: 'limits',
    description: 'The MCP tier (requests to /mcp, per credential) as `limit/windowSeconds`.',
    configKey: 'rateLimit.mcp',
  },
  {
    name: 'REDIS_URL',
    group: 'cluster',
    description: 'Redis, for rate-limit windows and notices shared between instances.',
  },
  {
    name: 'ENTIGEN_REDIS_PREFIX',
    group: 'cluster',
    description: 'The prefix of every Redis key and channel, to separate apps that share one Redis.',
    default: 'entigen',
  },
  {
    name: 'CLUSTER_MAX_STALENESS',
    group: 'cluster',
    description:
      "The longest a cache is trusted without proof that every other instance's notice arrived (50ms to 1m).",
    default: '1s',
    configKey: 'cluster.maxStaleness',
  },
  {
    name: 'LOG_LEVEL',
    group: 'logs',
    description: "pino's level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.",
    default: 'info',
  },
  {
    name: 'LOG_FORMAT',
    group: 'logs',
    description:
      '`json` (one JSON line per event) or `pretty` (readable lines). A stdout nobody reads holds at most 8 MB of JSON lines, and never keeps a request waiting.',
    default: '`pretty` on a terminal outside production, else `json`',
  },
  {
    name: 'ENTIGEN_DEBUG',
    group: 'logs',
    description: 'Set: a failing CLI command also prints the stack trace.',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    group: 'operations',
    description:
      "Turns OpenTelemetry traces on: the OTLP/HTTP collector's base address (`/v1/traces` is added), such as `http://collector:4318`. `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` and `OTEL_BSP_*` apply as the OpenTelemetry specification says.",
    configKey: 'telemetry.endpoint',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    group: 'operations',
    description: 'Turns traces on too: the full address spans are posted to (used as it is).',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    group: 'operations',
    description:
      '`http/protobuf` or `http/json` (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` wins over it); gRPC is refused at start.',
    default: 'http/protobuf',
    configKey: 'telemetry.protocol',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    group: 'operations',
    description: 'The same as `OTEL_EXPORTER_OTLP_PROTOCOL`, for traces alone; wins over it.',
  },
  {
    name: 'OTEL_SERVICE_NAME',
    group: 'operations',
    description: 'The `service.name` of the spans (`OTEL_RESOURCE_ATTRIBUTES` adds more, `key=value,...`).',
    default: "the app's name",
  },
  {
    name: 'OTEL_TRACES_SAMPLER',
    group: 'operations',
    description:
      'Which traces are kept: `parentbased_always_on`, `parentbased_traceidratio` with `OTEL_TRACES_SAMPLER_ARG` (a ratio from 0 to 1), `always_on`, `always_off`, `traceidratio`, `parentbased_always_off`; another value stops the start. It wins over `telemetry.sampleRatio`.',
    default: 'parentbased_always_on',
    configKey: 'telemetry.sampleRatio',
  },
  {
    name: 'OTEL_TRACES_SAMPLER_ARG',
    group: 'operations',
    description:
      'The ratio of the `traceidratio` samplers, from 0 to 1 (`0.1`: a tenth of new traces); anything else stops the start.',
    default: '1',
  },
  {
    name: 'OTEL_SDK_DISABLED',
    group: 'operations',
    description: '`true`: no traces, whatever else is set; the SDK is not loaded.',
  },
  {
    name: 'ENTIGEN_LOADER',
    group: 'operations',
    description:
      "`tsx`: `entigen serve` loads `generated/` and the project's modules through tsx instead of compiling them once into a cached JavaScript bundle (which saves the server about 50 MB and half its start). The bundle is skipped by itself where it could not be faithful: an `import()` of a computed path, `import.meta.resolve`, a compile error.",
  },
  {
    name: 'ENTIGEN_MODULE_CACHE',
    group: 'operations',
    description:
      "Where `entigen serve` keeps the compiled project modules, and `entigen build`, `check` and `dev` what each entity file's text read into and each entity's compiled validators (so a rebuild parses only the files that changed and compiles only the entities whose fields changed); set it when the project's folder is read-only. Without it: `node_modules/.cache/entigen`, else the system's temporary folder.",
  },
  {
    name: 'METRICS_TOKEN',
    group: 'operations',
    description:
      'The scrape token of `GET /api/metrics` (at least 16 characters); administrators may scrape without it.',
    configKey: 'metrics.token',
  },
];
