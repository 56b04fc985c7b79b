import type { DateBucket } from '../types.js';

const DAY_MS = 86_400_000;
/** Time-zone offsets and their changes fall on quarter hours, so one local date holds per UTC quarter hour. */
const SLOT_MS = 900_000;
const MAX_CACHED = 50_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
const localDates = new Map<string, Map<number, string>>();

let zones: ReadonlySet<string> | undefined;

/** Whether `name` is a time zone the runtime (and so the stores) knows: `UTC` or a canonical IANA name. */
export function isTimeZone(name: string): boolean {
  zones ??= new Set(['UTC', ...Intl.supportedValuesOf('timeZone')]);
  return zones.has(name);
}

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, format);
  }
  return format;
}

/** `YYYY-MM-DD`: the calendar date of an instant in a time zone. */
export function localDate(time: number, timeZone: string): string {
  let cache = localDates.get(timeZone);
  if (!cache) {
    cache = new Map();
    localDates.set(timeZone, cache);
  }
  const slot = Math.floor(time / SLOT_MS);
  let date = cache.get(slot);
  if (date === undefined) {
    const parts = Object.fromEntries(
      formatter(timeZone)
        .formatToParts(time)
        .map((p) => [p.type, p.value]),
    );
    date = `${parts.year.padStart(4, '0')}-${parts.month}-${parts.day}`;
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(slot, date);
  }
  return date;
}

/** The first day (`YYYY-MM-DD`) of the unit a local date falls in; weeks start on Monday (ISO 8601). */
export function bucketStart(date: string, bucket: DateBucket): string {
  switch (bucket) {
    case 'day':
      return date;
    case 'month':
      return `${date.slice(0, 8)}01`;
    case 'year':
      return `${date.slice(0, 5)}01-01`;
    case 'week': {
      const time = Date.parse(`${date}T00:00:00Z`);
      const back = (new Date(time).getUTCDay() + 6) % 7;
      return new Date(time - back * DAY_MS).toISOString().slice(0, 10);
    }
  }
}

/** The bucket key of a stored date (a UTC timestamp), or null when there is none. */
export function dateBucket(value: unknown, bucket: DateBucket, timeZone: string): string | null {
  if (typeof value !== 'string') return null;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return null;
  const date = timeZone === 'UTC' && value.length === 24 ? value.slice(0, 10) : localDate(time, timeZone);
  return bucketStart(date, bucket);
}
