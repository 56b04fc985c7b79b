import type { Router } from 'express';
import type { AnyRoute } from '../api/route.js';
import type { EnvironmentVariable } from '../config/environment.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { EntityRules } from '../context/entityRules.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { WebhookDispatcher } from '../events/webhooks/webhookDispatcher.js';
import type { JobHandler, Scheduler } from '../jobs/scheduler.js';
import type { AppModel, JobScheduleModel } from '../model/types.js';
import type { Store } from '../store/types.js';

/** What a feature's routers are made with. */
export interface FeatureDeps {
  ctx: RuntimeContext;
  scheduler: Scheduler;
  webhooks: WebhookDispatcher;
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
export interface Feature {
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
  /** Its routers by prefix, mounted ahead of the entity routers (a prefix may be an entity's own). */
  routers?(deps: FeatureDeps): [prefix: string, router: Router][];
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
  /** Jobs the server runs for it. */
  jobs?(model: AppModel, config?: RuntimeConfig): ServerJob[];
}
