import type { WebhooksConfig } from '../../config/runtimeConfig.js';
import type { EntityRules } from '../../context/entityRules.js';
import { CHANGE_EVENTS } from '../../context/hookTypes.js';
import { ApiError, newDetails, validationError } from '../../errors/apiError.js';
import type { AppModel } from '../../model/types.js';
import { isLogged, lastEventSeq } from '../../write/eventLog.js';
import { targetProblem } from './safeTarget.js';
import { newWebhookSecret } from './signature.js';

const EVENT_TYPES: readonly string[] = CHANGE_EVENTS;

/**
 * A webhook's target and patterns are checked when it is written: an http(s) URL without
 * credentials that is public unless private targets are allowed, patterns of known entities
 * and event types, known entities. A new webhook gets its signing secret and starts after the
 * last event logged before it.
 */
export function webhookRules(model: AppModel, config: Pick<WebhooksConfig, 'allowPrivateTargets'>): EntityRules {
  const logged = new Set(model.entities.filter(isLogged).map((e) => e.plural));
  const check = (values: Record<string, unknown>) => {
    const details = newDetails();
    if (typeof values.url === 'string') {
      const problem = targetProblem(values.url, config.allowPrivateTargets);
      if (problem) details.url = problem;
    }
    (values.events as string[] | undefined)?.forEach((pattern, i) => {
      const problem = patternProblem(pattern, logged);
      if (problem) details[`events.${i}`] = problem;
    });
    (values.entities as string[] | undefined)?.forEach((name, i) => {
      if (!logged.has(name)) details[`entities.${i}`] = `"${name}" is not an entity whose changes are logged`;
    });
    if (Object.keys(details).length > 0) throw validationError(details, 'Invalid webhook');
  };
  return {
    async beforeCreate(ctx, _caller, values) {
      check(values);
      values.secret = newWebhookSecret();
      values.startAfter = await lastEventSeq(ctx.store);
    },
    async beforeUpdate(_ctx, _caller, _current, values) {
      check(values);
    },
  };
}

function patternProblem(pattern: string, logged: ReadonlySet<string>): string | undefined {
  if (pattern === '*') return undefined;
  const [entity, type, ...rest] = pattern.split('.');
  if (type === undefined || rest.length > 0) return 'must look like orders.*, *.deleted, orders.created or *';
  if (entity !== '*' && !logged.has(entity)) return `"${entity}" is not an entity whose changes are logged`;
  if (type !== '*' && !EVENT_TYPES.includes(type)) return `"${type}" is not an event (${EVENT_TYPES.join(', ')})`;
  return undefined;
}

/** Delivery rows are the server's own record: written by the dispatchers, never created through the API. */
export const deliveryRules: EntityRules = {
  async beforeCreate() {
    throw new ApiError(
      'UNPROCESSABLE_ENTITY',
      'Deliveries are recorded by the server; use POST /webhooks/{id}/replay or /webhookDeliveries/{id}/redeliver',
    );
  },
};
