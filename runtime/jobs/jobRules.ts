import type { EntityRules } from '../entities/entityRules.js';
import { validationError } from '../errors/apiError.js';
import { isValidTimezone, nextRunAfter, type ScheduleType, scheduleProblem } from './schedule.js';

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

/** Schedules are checked when a job is written, and nextRunAt is computed then. */
export const jobRules: EntityRules = {
  async beforeCreate(ctx, _caller, values) {
    const type = values.scheduleType as ScheduleType;
    const timezone = (values.timezone as string | undefined) ?? 'UTC';
    checkSchedules(type, values.schedules as string[], timezone);
    if (values.nextRunAt === undefined)
      values.nextRunAt = nextRunAfter(type, values.schedules as string[], timezone, ctx.now()).toISOString();
  },
  async beforeUpdate(ctx, _caller, current, values) {
    const touched = ['scheduleType', 'schedules', 'timezone'].some((key) => values[key] !== undefined);
    if (!touched) return;
    const type = (values.scheduleType ?? current.scheduleType) as ScheduleType;
    const schedules = (values.schedules ?? current.schedules) as string[];
    const timezone = (values.timezone ?? current.timezone ?? 'UTC') as string;
    checkSchedules(type, schedules, timezone);
    if (values.nextRunAt === undefined)
      values.nextRunAt = nextRunAfter(type, schedules, timezone, ctx.now()).toISOString();
  },
};
