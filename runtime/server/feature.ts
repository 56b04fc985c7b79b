import type { Router } from 'express';
import type { AnyRoute } from '../api/route.js';
import type { EnvironmentVariable } from '../config/environment.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { Caller } from '../context/caller.js';
import type { EntityRules } from '../context/entityRules.js';
import type { WriteOrigin } from '../context/hookTypes.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { LogFeed } from '../events/logFeed.js';
import type { JobHandler, Scheduler } from '../jobs/scheduler.js';
import type { AppModel, JobScheduleModel } from '../model/types.js';
import type { Store } from '../store/types.js';
import type { Context } from '../telemetry/tracing.js';

/** What a feature's routers are made with. */
export interface FeatureDeps {
  ctx: RuntimeContext;
  scheduler: Scheduler;
}

/** What a feature's work is made with. */
export interface WorkDeps {
  ctx: RuntimeContext;
  config: RuntimeConfig;
  /** This instance's one reader of the event log. */
  feed: LogFeed;
  /** The author of a logged change as a Caller, as they are now. */
  callerOf(userId: string | undefined): Promise<Caller>;
  /** Typed repositories that act as the system (each write its own transaction). */
  systemRepositories(origin: WriteOrigin, trace?: Context): unknown;
}

/**
 * What a feature keeps doing while the server is up: started once the store, the bus and the
 * event log's reader are, stopped on the way down before the connections close.
 */
export interface FeatureWork {
  start(): void | Promise<void>;
  /** Stops taking work and waits for what is in flight. */
  stop(): Promise<void>;
  /** Something committed (to `entity`, when the writer knows). */
  notify?(entity?: string): void;
  /**
   * A consumer of the event log: the newest event, at most `upTo`, that it has settled; the log
   * keeps what any consumer has not.
   */
  deliveredUpTo?(upTo: number): Promise<number>;
}

/** What a feature's server-side jobs are made with. */
export interface JobDeps {
  ctx: RuntimeContext;
  config: RuntimeConfig;
  root: string;
  env: NodeJS.ProcessEnv;
}

/** A job the server itself runs for a feature: its schedule (reconciled at start, like the config's) and its handler. */
export interface ServerJob {
  schedule: JobScheduleModel;
  handler: (deps: JobDeps) => JobHandler;
}

/**
 * One built-in feature and everything the server does for it. The server's steps, the app's
 * routers and the entity rules are loops over these; a feature that is off adds nothing.
 */
export interface Feature<W extends FeatureWork = FeatureWork> {
  name: string;
  /**
   * Whether the app has it. Decided from the model (as the route declarations' `when` decide the
   * document and the client) and, for features the config alone turns on, from the config; a
   * command outside the server passes no config, and such features are off there.
   */
  enabled(model: AppModel, config?: RuntimeConfig): boolean;
  /** The built-in collections it keeps its records in. */
  entities?: readonly string[];
  /** The config's section it reads (entigen.config.yaml). */
  config?: keyof RuntimeConfig;
  /** Environment variables it reads, described for the reference (runtime/server/environment.ts). */
  env?: readonly EnvironmentVariable[];
  /** Its route declarations (runtime/api/): what it answers, documented and typed from there. */
  routes?: readonly AnyRoute[];
  /**
   * Its routers by prefix, mounted ahead of the entity routers (a prefix may be an entity's own);
   * `work` is its own work, started.
   */
  routers?(deps: FeatureDeps, work: W | undefined): [prefix: string, router: Router][];
  /** The rules of its built-in entities, by plural; those of entities the model lacks are left out. */
  rules?(
    model: AppModel,
    config: RuntimeConfig | undefined,
    handlers: readonly string[],
  ): [plural: string | undefined, EntityRules][];
  /**
   * Wraps the store every operation uses, the server's and every command's alike (what it keeps
   * out of sight, how it folds records); features wrap in the table's order, the last outermost.
   */
  store?(store: Store, model: AppModel): Store;
  /** Its work while the server is up (deliveries, dispatchers). */
  work?(deps: WorkDeps): W;
  /** Jobs the server runs for it. */
  jobs?(model: AppModel, config?: RuntimeConfig): ServerJob[];
}
