import type { EntityRules } from '../context/entityRules.js';
import { ApiError, validationError } from '../errors/apiError.js';
import { isValidTimezone, nextRunAfter, type ScheduleType, scheduleProblem } from '../model/schedule.js';
import type { Doc } from '../store/types.js';

function checkSchedules(type: ScheduleType, schedules: string[], timezone: string): void {
  const details: Record<string, string> = {};
  if (schedules.length === 0) details.schedules = 'must hold at least one expression';
  schedules.forEach((expression, i) => {
    const problem = scheduleProblem(type, expression);
    if (problem) details[`schedules.${i}`] = problem;
  });
  if (!isValidTimezone(timezone))
    details.timezone = `"${timezone}" is not an IANA timezone such as UTC or Europe/Berlin`;
  if (Object.keys(details).length > 0) throw validationError(details, 'Invalid schedule');
}

/** The settings of a job that entigen.config.yaml owns when it declares the job (`origin: file`). */
export const FILE_OWNED_FIELDS = [
  'name',
  'description',
  'handler',
  'scheduleType',
  'schedules',
  'timezone',
  'timeout',
  'enabled',
] as const;

function checkHandler(handlers: readonly string[], handler: unknown): void {
  if (typeof handler === 'string' && !handlers.includes(handler)) {
    throw validationError({
      handler: `"${handler}" is not a handler: jobs.handlers exports ${handlers.length > 0 ? handlers.join(', ') : 'none'}`,
    });
  }
}

/** A job the config declares is changed there: 409 naming the file, for each owned field a write would change. */
function refuseFileOwned(current: Doc, values: Record<string, unknown>): void {
  if (current.origin !== 'file') return;
  const changed = FILE_OWNED_FIELDS.filter(
    (key) => values[key] !== undefined && JSON.stringify(values[key]) !== JSON.stringify(current[key]),
  );
  if (changed.length === 0) return;
  throw new ApiError(
    'CONFLICT',
    `Scheduled job ${String(current.name)} is declared in entigen.config.yaml (jobs.schedules.${String(current.name)}); change it there`,
    Object.fromEntries(changed.map((key) => [key, 'is set by entigen.config.yaml'])),
  );
}

/**
 * Schedules are checked when a job is written, and nextRunAt is computed then; the handler must
 * be one of `handlers` (the exports of the module jobs.handlers names). Jobs the config declares
 * keep its settings: the API may run them, not change or delete them.
 */
export function jobRules(handlers: readonly string[]): EntityRules {
  return {
    async beforeCreate(ctx, _caller, values) {
      checkHandler(handlers, values.handler);
      const type = values.scheduleType as ScheduleType;
      const timezone = (values.timezone as string | undefined) ?? 'UTC';
      checkSchedules(type, values.schedules as string[], timezone);
      if (values.nextRunAt === undefined)
        values.nextRunAt = nextRunAfter(type, values.schedules as string[], timezone, ctx.now()).toISOString();
    },
    async beforeUpdate(ctx, _caller, current, values) {
      refuseFileOwned(current, values);
      if (values.handler !== current.handler) checkHandler(handlers, values.handler);
      const touched = ['scheduleType', 'schedules', 'timezone'].some((key) => values[key] !== undefined);
      if (!touched) return;
      const type = (values.scheduleType ?? current.scheduleType) as ScheduleType;
      const schedules = (values.schedules ?? current.schedules) as string[];
      const timezone = (values.timezone ?? current.timezone ?? 'UTC') as string;
      checkSchedules(type, schedules, timezone);
      if (values.nextRunAt === undefined)
        values.nextRunAt = nextRunAfter(type, schedules, timezone, ctx.now()).toISOString();
    },
    async beforeRemove(_ctx, _caller, current) {
      if (current.origin === 'file') {
        throw new ApiError(
          'CONFLICT',
          `Scheduled job ${String(current.name)} is declared in entigen.config.yaml (jobs.schedules.${String(current.name)}); remove it there`,
        );
      }
    },
  };
}
