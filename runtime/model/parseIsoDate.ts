import { ISO_DATE_PATTERN } from './patterns.js';

const ISO_DATE = new RegExp(ISO_DATE_PATTERN);
const HAS_ZONE = /([Zz]|[+-]\d\d:?\d\d)$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const daysIn = (year: number, month: number) =>
  month === 2 && ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0) ? 29 : DAYS[month - 1];

/**
 * The time an ISO 8601 date or date-time names, or undefined when it names none: a bad shape or a
 * day the month does not have (2024-02-30; JavaScript would roll it into March). A date-time
 * without a zone is UTC, whatever the server's own time zone.
 */
export function parseIsoDate(text: string): number | undefined {
  if (!ISO_DATE.test(text)) return undefined;
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  if (day > daysIn(year, month)) return undefined;
  const time = Date.parse(text.length > 10 && !HAS_ZONE.test(text) ? `${text}Z` : text);
  return Number.isNaN(time) ? undefined : time;
}
