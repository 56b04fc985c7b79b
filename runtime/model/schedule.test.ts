import { describe, expect, it } from 'vitest';
import { isValidTimezone, nextRunAfter, scheduleProblem } from './schedule.js';

describe('schedules', () => {
  it('evaluates cron in the job timezone: 09:00 Europe/Berlin is 08:00 UTC in winter, 07:00 in summer', () => {
    expect(nextRunAfter('cron', ['0 9 * * *'], 'Europe/Berlin', new Date('2030-01-15T00:00:00Z')).toISOString()).toBe(
      '2030-01-15T08:00:00.000Z',
    );
    expect(nextRunAfter('cron', ['0 9 * * *'], 'Europe/Berlin', new Date('2030-07-15T00:00:00Z')).toISOString()).toBe(
      '2030-07-15T07:00:00.000Z',
    );
    expect(nextRunAfter('cron', ['0 9 * * *'], 'UTC', new Date('2030-01-15T00:00:00Z')).toISOString()).toBe(
      '2030-01-15T09:00:00.000Z',
    );
  });

  it('takes the earliest of several schedules', () => {
    const from = new Date('2030-01-15T10:00:00Z');
    expect(nextRunAfter('cron', ['0 12 * * *', '30 10 * * *'], 'UTC', from).toISOString()).toBe(
      '2030-01-15T10:30:00.000Z',
    );
    expect(nextRunAfter('interval', ['1h', '90s'], 'UTC', from).toISOString()).toBe('2030-01-15T10:01:30.000Z');
  });

  it('refuses malformed expressions with the expression in the message', () => {
    expect(scheduleProblem('interval', '5m')).toBeUndefined();
    expect(scheduleProblem('interval', '5 minutes')).toMatch(/"5 minutes" is not an interval/);
    expect(scheduleProblem('interval', '0s')).toMatch(/not an interval/);
    expect(scheduleProblem('cron', '*/5 * * * *')).toBeUndefined();
    expect(scheduleProblem('cron', '61 * * * *')).toMatch(/"61 \* \* \* \*" is not a valid cron expression/);
    expect(scheduleProblem('cron', '* * * *')).toMatch(/five-field/);
    expect(scheduleProblem('cron', '0 0 9 * * *')).toMatch(/five-field/);
  });

  it('knows timezones', () => {
    expect(isValidTimezone('Europe/Berlin')).toBe(true);
    expect(isValidTimezone('Mars/Olympus')).toBe(false);
  });
});
