import { describe, expect, it } from 'vitest';
import { parseIsoDate } from './parseIsoDate.js';

describe('parseIsoDate', () => {
  it('reads dates and date-times, a missing zone as UTC', () => {
    expect(parseIsoDate('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(parseIsoDate('2024-03-15T10:30')).toBe(Date.UTC(2024, 2, 15, 10, 30));
    expect(parseIsoDate('2024-03-15 10:30:05.5')).toBe(Date.UTC(2024, 2, 15, 10, 30, 5, 500));
    expect(parseIsoDate('2024-03-15T10:30:00+02:00')).toBe(Date.UTC(2024, 2, 15, 8, 30));
    expect(parseIsoDate('2024-03-15T10:30:00Z')).toBe(Date.UTC(2024, 2, 15, 10, 30));
  });

  it('refuses days the month does not have and other shapes', () => {
    for (const text of [
      '2024-02-30',
      '2023-02-29',
      '2024-04-31',
      '2024-13-01',
      '2024-1-1',
      '15/03/2024',
      '2024-03-15T25:00',
      '',
    ]) {
      expect(parseIsoDate(text), text).toBeUndefined();
    }
    expect(parseIsoDate('2024-12-31')).toBe(Date.UTC(2024, 11, 31));
    expect(parseIsoDate('2000-02-29')).toBeDefined();
    expect(parseIsoDate('1900-02-29')).toBeUndefined();
    expect(parseIsoDate('0000-02-29')).toBeDefined();
  });
});
