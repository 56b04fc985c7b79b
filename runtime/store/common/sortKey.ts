import type { Collation } from '../types.js';

/** Longest digit run that natural ordering pads; longer runs compare as text. */
const MAX_NUMBER_DIGITS = 99;

/** Any character outside ASCII: text without one has no accents to strip (and NFD leaves it as it is). */
const NON_ASCII = /[\u0080-\uffff]/;

function stripAccents(text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFD').replace(/\p{M}/gu, '') : text;
}

/**
 * Text as the default collation compares it for `contains` and `startsWith`: accents removed,
 * lower case. Stored beside filterable text (whole, unlike the ordering key), so a substring test
 * is a plain LIKE or regex in every store.
 */
export function foldText(value: string): string {
  return stripAccents(value).toLowerCase();
}

const isDigit = (code: number) => code >= 48 && code <= 57;

/**
 * Digit runs (ASCII) get a two-digit length prefix after their leading zeros go, so "item 2" <
 * "item 10" in plain text order; runs longer than MAX_NUMBER_DIGITS stay as they are. A loop
 * rather than a replace with a callback: ids and dates, full of digit runs, pass here on every write.
 */
export function padNumbers(text: string): string {
  let out = '';
  let copied = 0;
  for (let at = 0; at < text.length; at++) {
    if (!isDigit(text.charCodeAt(at))) continue;
    let end = at + 1;
    while (end < text.length && isDigit(text.charCodeAt(end))) end++;
    let start = at;
    while (start < end - 1 && text.charCodeAt(start) === 48) start++;
    const length = end - start;
    out += text.slice(copied, at);
    out +=
      length > MAX_NUMBER_DIGITS ? text.slice(at, end) : `${length < 10 ? '0' : ''}${length}${text.slice(start, end)}`;
    copied = end;
    at = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Characters of a stored ordering key: strings that agree this far sort by id. Keeps every
 * key small enough for any index (PostgreSQL's btree refuses rows over about 2.7 kB).
 */
export const MAX_SORT_KEY_LENGTH = 256;

/**
 * The default ordering key of a string: case- and accent-insensitive, natural numbers.
 * Stored beside the value, so ordering is a plain indexed text comparison in every SQL store.
 */
export function naturalSortKey(value: string): string {
  // Only the start matters: later characters cannot change the first MAX_SORT_KEY_LENGTH of the key.
  const key = padNumbers(stripAccents(value.slice(0, MAX_SORT_KEY_LENGTH * 2)).toLowerCase());
  // Fewer UTF-16 units than the limit means fewer characters too: no need to count them.
  return key.length <= MAX_SORT_KEY_LENGTH ? key : [...key].slice(0, MAX_SORT_KEY_LENGTH).join('');
}

/**
 * Ordering key for an explicit collation: base letters first, then accents (strength >= 2),
 * then case with lower before upper (strength 3), as ICU compares. Locale-specific letter
 * orders (Swedish å after z, say) are not applied; the store's native collation does that.
 */
export function collationKey(value: string, collation: Collation): string {
  const strength = collation.strength ?? 3;
  const number = collation.numericOrdering ? padNumbers : (text: string) => text;
  const primary = number(stripAccents(value).toLowerCase());
  if (strength === 1) return primary;
  const secondary = number(value.normalize('NFD').toLowerCase());
  if (strength === 2) return `${primary}\u0001${secondary}`;
  const tertiary = [...value].map((ch) => (ch !== ch.toLowerCase() ? '1' : '0')).join('');
  return `${primary}\u0001${secondary}\u0001${tertiary}`;
}
