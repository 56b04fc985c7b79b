import { describe, expect, it } from 'vitest';
import { bucketStart, dateBucket, isTimeZone } from './dateBucket.js';

describe('date buckets', () => {
  it('start weeks on Monday, months and years on their first day', () => {
    expect(bucketStart('2024-03-31', 'week')).toBe('2024-03-25'); // a Sunday
    expect(bucketStart('2024-04-01', 'week')).toBe('2024-04-01'); // a Monday
    expect(bucketStart('2025-01-01', 'week')).toBe('2024-12-30'); // across the year
    expect(bucketStart('2024-02-29', 'month')).toBe('2024-02-01');
    expect(bucketStart('2024-02-29', 'year')).toBe('2024-01-01');
  });

  it('take the calendar date in the zone, across daylight-saving changes', () => {
    // Berlin changes to summer time at 01:00 UTC on 2024-03-31.
    expect(dateBucket('2024-03-30T22:59:59.999Z', 'day', 'Europe/Berlin')).toBe('2024-03-30');
    expect(dateBucket('2024-03-30T23:00:00.000Z', 'day', 'Europe/Berlin')).toBe('2024-03-31');
    expect(dateBucket('2024-03-31T21:59:59.999Z', 'day', 'Europe/Berlin')).toBe('2024-03-31');
    expect(dateBucket('2024-03-31T22:00:00.000Z', 'day', 'Europe/Berlin')).toBe('2024-04-01');
    // Half-hour and quarter-hour offsets.
    expect(dateBucket('2024-06-30T18:29:00.000Z', 'day', 'Asia/Kolkata')).toBe('2024-06-30');
    expect(dateBucket('2024-06-30T18:30:00.000Z', 'day', 'Asia/Kolkata')).toBe('2024-07-01');
    expect(dateBucket('2024-06-30T18:15:00.000Z', 'month', 'Asia/Kathmandu')).toBe('2024-07-01');
    expect(dateBucket('2024-01-01T04:59:59.000Z', 'year', 'America/New_York')).toBe('2023-01-01');
    expect(dateBucket('2024-01-01T00:00:00.000Z', 'year', 'UTC')).toBe('2024-01-01');
    expect(dateBucket(null, 'day', 'UTC')).toBeNull();
    expect(dateBucket('not a date', 'day', 'UTC')).toBeNull();
  });

  it('know UTC and canonical IANA names only', () => {
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone("UTC'; DROP TABLE x; --")).toBe(false);
  });
});
