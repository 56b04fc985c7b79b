import type { RuntimeConfig } from '../config/runtimeConfig.js';
import type { EntityRules, EntityRulesTable } from '../context/entityRules.js';
import { deliveryRules, webhookRules } from '../events/webhooks/webhookRules.js';
import { grantRules } from '../features/grants/grantRules.js';
import { tenantMembershipRules } from '../features/tenancy/tenantMembershipRules.js';
import { jobRules } from '../jobs/jobRules.js';
import { mediaRules } from '../media/mediaRules.js';
import {
  GRANTS,
  HOOK_DELIVERIES,
  MEDIA_ASSETS,
  SCHEDULED_JOBS,
  WEBHOOK_DELIVERIES,
  WEBHOOKS,
} from '../model/collections.js';
import type { AppModel } from '../model/types.js';

/**
 * The composition root of entity rules: each feature's rules, from its own folder, for the
 * entities this model has (webhooks and the delivery records, grants, scheduled jobs naming
 * one of `jobHandlers`, media assets, the configured tenancy entity).
 */
export function featureRules(
  model: AppModel,
  config: { webhooks: Pick<RuntimeConfig['webhooks'], 'allowPrivateTargets'> } = {
    webhooks: { allowPrivateTargets: false },
  },
  jobHandlers: readonly string[] = [],
): EntityRulesTable {
  const byFeature: [string | undefined, EntityRules][] = [
    [WEBHOOKS, webhookRules(model, config.webhooks)],
    [WEBHOOK_DELIVERIES, deliveryRules],
    [HOOK_DELIVERIES, deliveryRules],
    [GRANTS, grantRules],
    [SCHEDULED_JOBS, jobRules(jobHandlers)],
    [MEDIA_ASSETS, mediaRules],
    [model.tenancy?.entity, tenantMembershipRules],
  ];
  const present = new Set(model.entities.map((e) => e.plural));
  return new Map(
    byFeature.filter((entry): entry is [string, EntityRules] => entry[0] !== undefined && present.has(entry[0])),
  );
}
