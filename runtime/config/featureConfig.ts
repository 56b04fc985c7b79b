import { type ScheduleType, scheduleProblem } from '../model/schedule.js';
import { DEFAULT_THUMBNAIL_SIZES, MAX_THUMBNAIL_SIZES, THUMBNAIL_SIZE_PATTERN } from '../model/thumbnails.js';
import { booleanFromEnv, parseDuration } from './configValues.js';

// The sections of entigen.config.yaml that configure features: media uploads, backups, mail,
// realtime and webhooks.

/** `mcp:`, the MCP server for AI agents at /mcp. */
export interface McpConfig {
  enabled: boolean;
  /** Only the tools that read (list, get, search, aggregate, GET endpoints); the default. */
  readOnly: boolean;
  /** Delete tools too (when not read-only); off by default. */
  allowDelete: boolean;
  /**
   * Browser origins (`scheme://host[:port]`) whose pages may call /mcp, besides server.publicUrl's;
   * a request with any other Origin is refused (DNS rebinding). Requests without Origin pass.
   */
  allowedOrigins: string[];
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

export interface RawUploads {
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

export interface RawBackups {
  schedule?: string;
  keep?: number;
  to?: string;
  logical?: boolean;
}

export function backupsConfig(raw: RawBackups | undefined): BackupsConfig | undefined {
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
export function uploadsConfig(raw: RawUploads | undefined, env: NodeJS.ProcessEnv): UploadsConfig {
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

/** MAIL_URL, MAIL_FROM and MAIL_LINK_BASE override the config's `mail`. */
export interface RawMail {
  url?: string;
  from?: string;
  linkBase?: string;
  attempts?: number;
  backoff?: string;
  poll?: string;
  tls?: { rejectUnauthorized?: boolean; requireTLS?: boolean };
}

export function mailConfig(raw: RawMail | undefined, env: NodeJS.ProcessEnv): MailConfig {
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
