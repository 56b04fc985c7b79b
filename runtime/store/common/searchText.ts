/** Search text as every store indexes and matches it: the SQL stores, MongoDB and the search route. */

/** Text for the search index: string fields as they are, string arrays joined. */
export function searchText(value: unknown): string {
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'string').join(' ');
  return typeof value === 'string' ? value : '';
}

/** Search text as every store compares it: lower case, accents removed. */
export function normalizeSearch(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** Characters of the search value a SQL store keeps; PostgreSQL's tsvector holds at most 1 MB. */
export const MAX_SEARCH_VALUE_LENGTH = 256 * 1024;

/**
 * The words of a record's search fields, each once, normalized: what `q` matches word
 * prefixes against. Repeats add nothing to a prefix match, so a long text shrinks to its
 * vocabulary; a vocabulary past MAX_SEARCH_VALUE_LENGTH is cut there.
 */
export function searchVocabulary(text: string): string {
  const words = new Set(
    text
      .normalize('NFKC')
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean)
      .map(normalizeSearch),
  );
  let out = '';
  for (const word of words) {
    if (out.length + word.length + 1 > MAX_SEARCH_VALUE_LENGTH) break;
    out += out ? ` ${word}` : word;
  }
  return out;
}

/** Query text -> the terms every one of which must match as a word prefix. */
export function searchTerms(text: string): string[] {
  return text
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .slice(0, 32);
}
