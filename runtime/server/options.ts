import type { Logger } from 'pino';
import type { Mailer } from '../auth/authContext.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { Registry } from '../context/defineRegistry.js';
import type { JobHandler } from '../jobs/scheduler.js';
import type { RepositoryWriter } from '../repository.js';
import type { Store } from '../store/types.js';

export interface StartOptions {
  registry: Registry;
  /** Project folder: config, data/ and development secrets live here. */
  root: string;
  env?: NodeJS.ProcessEnv;
  port?: number;
  host?: string;
  logger?: Logger;
  /** Sends password-reset mail; default: written to the log. */
  mailer?: Mailer;
  /** The configuration, read once by the caller; else read from entigen.config.yaml in `root`. */
  config?: RuntimeConfig;
  /** Replaces parts of the configuration (tests: rate limits). */
  overrides?: Partial<RuntimeConfig>;
  /** The clock of every operation and limit; tests move it. */
  now?: () => Date;
  /** Job handlers by name (the module named by jobs.handlers). */
  handlers?: Record<string, JobHandler>;
  /** Builds the typed repositories handed to job handlers (generated/index.ts exports it). */
  repositories?: (store: Store, writer?: RepositoryWriter) => unknown;
  /** false: do not look for due jobs (tests drive Scheduler.tick themselves). */
  schedule?: boolean;
  /** A store opened by the caller (tests: the MongoDB adapter on an in-memory driver); else DATABASE_URL's. */
  store?: Store;
  /** Hook modules (`defineHooks(...)` results) instead of those generated/index.ts wires into the registry. */
  hooks?: readonly unknown[];
}
