import { tracksChanges } from '../api/features.js';
import { features as api } from '../api/index.js';
import { backupJob, backupSchedule } from '../backup/backupJob.js';
import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { EntityRules, EntityRulesTable } from '../context/entityRules.js';
import { deliveryRules, webhookRules } from '../events/webhooks/webhookRules.js';
import { grantRules } from '../features/grants/grantRules.js';
import { tenantMembershipRules } from '../features/tenancy/tenantMembershipRules.js';
import { API_PREFIX } from '../http/createApp.js';
import { FIELD_CHANGES_PATH, fieldChangeRoutes } from '../http/fieldChangeRoutes.js';
import { JOBS_PATH, jobRoutes } from '../http/jobRoutes.js';
import { MEDIA_PATH, mediaRoutes } from '../http/mediaRoutes.js';
import { SEARCH_PATH, searchRoutes } from '../http/searchRoutes.js';
import { webhookDeliveryRoutes, webhookRoutes } from '../http/webhookRoutes.js';
import { jobRules } from '../jobs/jobRules.js';
import { trashPurgeJob, trashPurgeSchedule } from '../jobs/trashPurge.js';
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
import type { Feature, FeatureDeps, JobDeps, ServerJob } from './feature.js';

// The built-in features, each with everything the server does for it: its routes, its entities'
// rules, its jobs, the config and environment it reads. The server's steps loop over these.

const NO_PRIVATE_TARGETS = { allowPrivateTargets: false } as RuntimeConfig['webhooks'];

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
  env: [
    'UPLOADS_DRIVER',
    'UPLOADS_DIR',
    'S3_BUCKET',
    'S3_ENDPOINT',
    'S3_REGION',
    'S3_PREFIX',
    'S3_FORCE_PATH_STYLE',
    'S3_ACCESS_KEY_ID',
    'S3_SECRET_ACCESS_KEY',
  ],
  routes: [api.upload, api.mediaFile],
  routers: ({ ctx }) => (ctx.media ? [[MEDIA_PATH, mediaRoutes(ctx, ctx.media)]] : []),
  rules: () => [[MEDIA_ASSETS, mediaRules]],
};

/** Outgoing webhooks and their deliveries. */
const webhooks: Feature = {
  name: 'webhooks',
  enabled: has(WEBHOOKS),
  entities: [WEBHOOKS, WEBHOOK_DELIVERIES],
  config: 'webhooks',
  env: ['WEBHOOKS_ALLOW_PRIVATE_TARGETS'],
  routes: [api.rotateWebhookSecret, api.replayWebhook, api.redeliver],
  routers: ({ ctx, webhooks: dispatcher }) => [
    [`${API_PREFIX}/${WEBHOOKS}`, webhookRoutes(ctx, dispatcher)],
    [`${API_PREFIX}/${WEBHOOK_DELIVERIES}`, webhookDeliveryRoutes(ctx, dispatcher)],
  ],
  rules: (model, config) => [
    [WEBHOOKS, webhookRules(model, config.webhooks)],
    [WEBHOOK_DELIVERIES, deliveryRules],
  ],
};

/** afterCommit hooks: their delivery records. */
const hooks: Feature = {
  name: 'hooks',
  enabled: has(HOOK_DELIVERIES),
  entities: [HOOK_DELIVERIES],
  config: 'hooks',
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

/** The trash: its hourly purge of what has been kept long enough. */
const trash: Feature = {
  name: 'trash',
  enabled: (model) => model.entities.some((e) => e.trash),
  jobs: (model) => {
    const schedule = trashPurgeSchedule(model);
    return schedule ? [{ schedule, handler: ({ ctx }: JobDeps) => trashPurgeJob(ctx) }] : [];
  },
};

/** Scheduled backups (`backups.schedule`). */
const backups: Feature = {
  name: 'backups',
  enabled: (_model, config) => config.backups !== undefined,
  config: 'backups',
  jobs: (_model, config) =>
    config.backups
      ? [
          {
            schedule: backupSchedule(config.backups),
            handler: ({ ctx, root, env }: JobDeps) => backupJob(ctx, config.backups!, root, env),
          },
        ]
      : [],
};

/** Every built-in feature, in the order their routers mount. */
export const FEATURES: readonly Feature[] = [
  approvals,
  search,
  jobs,
  media,
  webhooks,
  hooks,
  grants,
  tenancy,
  trash,
  backups,
];

/** The features this app has. */
export function featuresOf(model: AppModel, config: RuntimeConfig): Feature[] {
  return FEATURES.filter((feature) => feature.enabled(model, config));
}

/** The jobs the server runs for the features this app has. */
export function serverJobs(model: AppModel, config: RuntimeConfig): ServerJob[] {
  return featuresOf(model, config).flatMap((feature) => feature.jobs?.(model, config) ?? []);
}

/**
 * The entity rules of the features this model has: each feature's rules, from its own folder,
 * for the entities the model has (webhooks and the delivery records, grants, scheduled jobs
 * naming one of `jobHandlers`, media assets, the configured tenancy entity).
 */
export function featureRules(
  model: AppModel,
  config: Pick<RuntimeConfig, 'webhooks'> = { webhooks: NO_PRIVATE_TARGETS },
  jobHandlers: readonly string[] = [],
): EntityRulesTable {
  const present = new Set(model.entities.map((e) => e.plural));
  // Rules read the webhooks' settings only; a command without a server's config passes none.
  const settings = config as RuntimeConfig;
  return new Map(
    featuresOf(model, settings)
      .flatMap((feature) => feature.rules?.(model, settings, jobHandlers) ?? [])
      .filter((entry): entry is [string, EntityRules] => entry[0] !== undefined && present.has(entry[0])),
  );
}
