import { createRequire } from 'node:module';

type CronParser = typeof import('cron-parser').CronExpressionParser;
let cronParser: CronParser | undefined;
/**
 * cron-parser (with luxon) is loaded at the first cron expression: some 25 ms that every build
 * and every server start without one would otherwise pay.
 */
function cron(): CronParser {
  cronParser ??= (createRequire(import.meta.url)('cron-parser') as typeof import('cron-parser')).CronExpressionParser;
  return cronParser;
}

export type ScheduleType = 'cron' | 'interval';

const INTERVAL = /^([1-9]\d{0,8})([smh])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000 } as const;

export function isValidTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Why an expression is not a schedule of its type, or undefined when it is one. */
export function scheduleProblem(type: ScheduleType, expression: string): string | undefined {
  if (type === 'interval')
    return INTERVAL.test(expression)
      ? undefined
      : `"${expression}" is not an interval: an integer and s, m or h, such as 30s or 5m`;
  if (expression.trim().split(/\s+/).length !== 5)
    return `"${expression}" is not a five-field cron expression (minute hour day month weekday)`;
  try {
    cron().parse(expression);
    return undefined;
  } catch (error) {
    return `"${expression}" is not a valid cron expression: ${(error as Error).message}`;
  }
}

/**
 * The next time any of the schedules fires after `from`. Cron expressions are evaluated in the
 * job's timezone; intervals count from `from` (the start of the last run, or the creation).
 */
export function nextRunAfter(type: ScheduleType, schedules: string[], timezone: string, from: Date): Date {
  const candidates = schedules.map((expression) => {
    if (type === 'interval') {
      const [, amount, unit] = INTERVAL.exec(expression)!;
      return new Date(from.getTime() + Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS]);
    }
    return cron().parse(expression, { currentDate: from, tz: timezone }).next().toDate();
  });
  return new Date(Math.min(...candidates.map((d) => d.getTime())));
}
