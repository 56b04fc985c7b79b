import type { Router } from 'express';
import { tracksChanges } from '../api/features.js';
import { features as api } from '../api/index.js';
import { backupJob, backupSchedule } from '../backup/backupJob.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { EntityRules, EntityRulesTable } from '../context/entityRules.js';
import { HookDispatcher } from '../events/hookDispatcher.js';
import { WebhookDispatcher } from '../events/webhooks/webhookDispatcher.js';
import { deliveryRules, webhookRules } from '../events/webhooks/webhookRules.js';
import { grantRules } from '../features/grants/grantRules.js';
import { tenantMembershipRules } from '../features/tenancy/tenantMembershipRules.js';
import { API_PREFIX } from '../http/createApp.js';
import { FIELD_CHANGES_PATH, fieldChangeRoutes } from '../http/fieldChangeRoutes.js';
import { JOBS_PATH, jobRoutes } from '../http/jobRoutes.js';
import { MCP_PATH, mcpRoutes } from '../http/mcpRoutes.js';
import { MEDIA_PATH, mediaRoutes } from '../http/mediaRoutes.js';
import { SEARCH_PATH, searchRoutes } from '../http/searchRoutes.js';
import { webhookDeliveryRoutes, webhookRoutes } from '../http/webhookRoutes.js';
import { jobRules } from '../jobs/jobRules.js';
import { trashPurgeJob, trashPurgeSchedule } from '../jobs/trashPurge.js';
import { McpHub } from '../mcp/mcpHub.js';
import { MEDIA_VARIABLES } from '../media/mediaEnvironment.js';
import { mediaRules } from '../media/mediaRules.js';
import {
  FIELD_CHANGES,
  GRANTS,
  HOOK_DELIVERIES,
  JOB_EXECUTIONS,
  JOB_SNAPSHOTS,
  MEDIA_ASSETS,
  SCHEDULED_JOBS,
  WEBHOOK_DELIVERIES,
  WEBHOOKS,
} from '../model/collections.js';
import type { AppModel } from '../model/types.js';
import { withLocales } from '../store/localeStore.js';
import { withTrash } from '../store/trashStore.js';
import type { Store } from '../store/types.js';
import type { Feature, FeatureDeps, FeatureWork, JobDeps, ServerJob, WorkDeps } from './feature.js';

// The built-in features, each with everything the server does for it: its routes, its entities'
// rules, its jobs, the config and environment it reads. The server's steps loop over these.

/** Webhook targets as a command without the server's config checks them: public addresses only. */
const NO_PRIVATE_TARGETS = { allowPrivateTargets: false };

const has = (plural: string) => (model: AppModel) => model.entities.some((e) => e.plural === plural);

/** The approvals queue: changes of tracked fields across every entity. */
const approvals: Feature = {
  name: 'approvals',
  enabled: tracksChanges,
  entities: [FIELD_CHANGES],
  routes: [api.fieldChangeQueue],
  routers: ({ ctx }) => [[FIELD_CHANGES_PATH, fieldChangeRoutes(ctx)]],
};

/** Full-text search across entities (`features: [search]`). */
const search: Feature = {
  name: 'search',
  enabled: (model) => model.features.includes('search'),
  routes: [api.search],
  routers: ({ ctx }) => [[SEARCH_PATH, searchRoutes(ctx)]],
};

/** Scheduled jobs: the entity, its run-now route, and the handlers its records may name. */
const jobs: Feature = {
  name: 'jobs',
  enabled: has(SCHEDULED_JOBS),
  entities: [SCHEDULED_JOBS, JOB_EXECUTIONS, JOB_SNAPSHOTS],
  config: 'jobs',
  env: [
    {
      name: 'ENTIGEN_SCHEDULER',
      group: 'cluster',
      description: '`off`: this instance runs no scheduled jobs (others on the same database still do).',
    },
  ],
  routes: [api.runJob],
  routers: ({ ctx, scheduler }: FeatureDeps) => [[JOBS_PATH, jobRoutes(ctx, scheduler)]],
  rules: (_model, _config, handlers) => [[SCHEDULED_JOBS, jobRules(handlers)]],
};

/** Media: uploads, files and thumbnails, on a folder or an S3-compatible bucket. */
const media: Feature = {
  name: 'media',
  enabled: has(MEDIA_ASSETS),
  entities: [MEDIA_ASSETS],
  config: 'uploads',
  env: MEDIA_VARIABLES,
  routes: [api.upload, api.mediaFile],
  routers: ({ ctx }) => (ctx.media ? [[MEDIA_PATH, mediaRoutes(ctx, ctx.media)]] : []),
  rules: () => [[MEDIA_ASSETS, mediaRules]],
};

/** Outgoing webhooks and their deliveries. */
const webhooks: Feature<WebhookDispatcher> = {
  name: 'webhooks',
  enabled: has(WEBHOOKS),
  entities: [WEBHOOKS, WEBHOOK_DELIVERIES],
  config: 'webhooks',
  env: [
    {
      name: 'WEBHOOKS_ALLOW_PRIVATE_TARGETS',
      group: 'limits',
      description: '`true` lets webhooks target private, loopback and link-local addresses.',
      default: 'false',
      configKey: 'webhooks.allowPrivateTargets',
    },
  ],
  routes: [api.rotateWebhookSecret, api.replayWebhook, api.redeliver],
  work: ({ ctx, config, feed }) => new WebhookDispatcher(ctx, config.webhooks, feed),
  routers: ({ ctx }, dispatcher) =>
    dispatcher
      ? [
          [`${API_PREFIX}/${WEBHOOKS}`, webhookRoutes(ctx, dispatcher)],
          [`${API_PREFIX}/${WEBHOOK_DELIVERIES}`, webhookDeliveryRoutes(ctx, dispatcher)],
        ]
      : [],
  rules: (model, config) => [
    [WEBHOOKS, webhookRules(model, config?.webhooks ?? NO_PRIVATE_TARGETS)],
    [WEBHOOK_DELIVERIES, deliveryRules],
  ],
};

/** afterCommit hooks: delivered from the event log, with their delivery records. */
const hooks: Feature<HookDispatcher> = {
  name: 'hooks',
  enabled: has(HOOK_DELIVERIES),
  entities: [HOOK_DELIVERIES],
  config: 'hooks',
  work: ({ ctx, config, callerOf, systemRepositories }) =>
    new HookDispatcher(ctx, { ...config.hooks, repositories: systemRepositories, callerOf }),
  rules: () => [[HOOK_DELIVERIES, deliveryRules]],
};

/** Per-record grants (`features: [grants]`). */
const grants: Feature = {
  name: 'grants',
  enabled: has(GRANTS),
  entities: [GRANTS],
  rules: () => [[GRANTS, grantRules]],
};

/** Tenancy: the members of the tenant entity the model names. */
const tenancy: Feature = {
  name: 'tenancy',
  enabled: (model) => model.tenancy !== undefined,
  rules: (model) => [[model.tenancy?.entity, tenantMembershipRules]],
};

/** Localized fields (`locales:`): one object per record, whatever columns hold the locales. */
const locales: Feature = {
  name: 'locales',
  enabled: (model) => model.locales !== undefined,
  store: withLocales,
};

/** The trash: deleted records out of sight, and the hourly purge of what has been kept long enough. */
const trash: Feature = {
  name: 'trash',
  enabled: (model) => model.entities.some((e) => e.trash),
  store: withTrash,
  jobs: (model) => {
    const schedule = trashPurgeSchedule(model);
    return schedule ? [{ schedule, handler: ({ ctx }: JobDeps) => trashPurgeJob(ctx) }] : [];
  },
};

/** Scheduled backups (`backups.schedule`). */
const backups: Feature = {
  name: 'backups',
  enabled: (_model, config) => config?.backups !== undefined,
  config: 'backups',
  jobs: (_model, config) => {
    const settings = config?.backups;
    return settings
      ? [
          {
            schedule: backupSchedule(settings),
            handler: ({ ctx, root, env }: JobDeps) => backupJob(ctx, settings, root, env),
          },
        ]
      : [];
  },
};

/** The MCP server for AI agents (`mcp: { enabled: true }`): tools from the entities, under the caller's rules. */
const mcp: Feature<McpHub> = {
  name: 'mcp',
  enabled: (_model, config) => config?.mcp?.enabled === true,
  config: 'mcp',
  work: ({ config }) =>
    new McpHub(config.mcp, new Set(config.server.publicUrl ? [new URL(config.server.publicUrl).origin] : [])),
  routers: ({ ctx }, hub) => (hub ? [[MCP_PATH, mcpRoutes(ctx, hub)]] : []),
};

/** Every built-in feature, in the order their routers mount and their work starts. */
export const FEATURES: readonly Feature[] = [
  approvals,
  search,
  jobs,
  media,
  webhooks,
  hooks,
  grants,
  tenancy,
  locales,
  trash,
  backups,
  mcp,
];

/** The features this app has (a command without the server's config: those the model turns on). */
export function featuresOf(model: AppModel, config?: RuntimeConfig): Feature[] {
  return FEATURES.filter((feature) => feature.enabled(model, config));
}

/** The jobs the server runs for the features this app has. */
export function serverJobs(model: AppModel, config?: RuntimeConfig): ServerJob[] {
  return featuresOf(model, config).flatMap((feature) => feature.jobs?.(model, config) ?? []);
}

/**
 * The entity rules of the features this model has: each feature's rules, from its own folder,
 * for the entities the model has (webhooks and the delivery records, grants, scheduled jobs
 * naming one of `jobHandlers`, media assets, the configured tenancy entity).
 */
export function featureRules(
  model: AppModel,
  config?: RuntimeConfig,
  jobHandlers: readonly string[] = [],
): EntityRulesTable {
  const present = new Set(model.entities.map((e) => e.plural));
  return new Map(
    featuresOf(model, config)
      .flatMap((feature) => feature.rules?.(model, config, jobHandlers) ?? [])
      .filter((entry): entry is [string, EntityRules] => entry[0] !== undefined && present.has(entry[0])),
  );
}

/** `store` as the features this model has wrap it: the store every operation of the app uses. */
export function featureStore(store: Store, model: AppModel): Store {
  return featuresOf(model).reduce((wrapped, feature) => feature.store?.(wrapped, model) ?? wrapped, store);
}

/** The work of the features an app has, each beside its feature: what the server starts and stops. */
export class FeatureWorks {
  private readonly works = new Map<Feature, FeatureWork>();

  constructor(
    readonly features: readonly Feature[],
    deps: WorkDeps,
  ) {
    for (const feature of features) {
      const work = feature.work?.(deps);
      if (work) this.works.set(feature, work);
    }
  }

  /** The work of `feature`, as its own type; absent when the app lacks the feature. */
  of<W extends FeatureWork>(feature: Feature<W>): W | undefined {
    return this.works.get(feature as Feature) as W | undefined;
  }

  async start(): Promise<void> {
    for (const work of this.works.values()) await work.start();
  }

  stop(): Promise<void> {
    return Promise.all([...this.works.values()].map((work) => work.stop())).then(() => undefined);
  }

  notify(entity?: string): void {
    for (const work of this.works.values()) work.notify?.(entity);
  }

  /** The newest event, at most `upTo`, every consumer of the log has settled. */
  async deliveredUpTo(upTo: number): Promise<number> {
    let settled = upTo;
    for (const work of this.works.values()) settled = (await work.deliveredUpTo?.(settled)) ?? settled;
    return settled;
  }

  /** The features' routers, each with its own work. */
  routers(deps: FeatureDeps): [prefix: string, router: Router][] {
    return this.features.flatMap((feature) => feature.routers?.(deps, this.works.get(feature)) ?? []);
  }
}

export { hooks as HOOKS_FEATURE, webhooks as WEBHOOKS_FEATURE };
