import { andWhere } from '../access/accessFor.js';
import { scopeFor } from '../access/requireAccess.js';
import type { Caller } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ApiError } from '../errors/apiError.js';
import type { EntityModel } from '../model/types.js';
import { normalizeSearch as normalize, searchTerms } from '../store/common/searchText.js';
import type { Doc, Where } from '../store/types.js';

export interface SearchHit {
  entity: string;
  id: string;
  title: string;
  snippet: string;
}

export interface SearchResult {
  items: SearchHit[];
  totalCount: number;
}

const TITLE_FIELDS = ['title', 'name', 'label', 'key', 'email'];
const SNIPPET_LENGTH = 160;

/** Entities the search spans: those with search fields that are not internal bookkeeping. */
export function searchableEntities(entities: readonly EntityModel[]): EntityModel[] {
  return entities.filter((e) => e.searchFields.length > 0 && !e.internal);
}

/**
 * GET /search: every searchable entity the caller may view, each record matching every term as
 * a word prefix (the `q` of lists), ranked by where the terms match, with a snippet around the
 * first match. Archived records are left out, as lists leave them out.
 */
export async function searchOperation(
  ctx: RuntimeContext,
  caller: Caller,
  q: string,
  limit: number,
): Promise<SearchResult> {
  const terms = searchTerms(q).map(normalize);
  if (terms.length === 0) return { items: [], totalCount: 0 };
  const ranked: { hit: SearchHit; score: number; updatedAt: string }[] = [];
  let totalCount = 0;
  for (const entity of searchableEntities(ctx.registry.model.entities)) {
    let viewable: Where | undefined;
    try {
      viewable = await scopeFor(ctx, caller, entity, 'view');
    } catch (error) {
      if (error instanceof ApiError) continue; // no view permission: the entity is not searched
      throw error;
    }
    const archived: Where | undefined =
      entity.ownership === 'owned' ? { field: 'archivedAt', op: 'exists', value: false } : undefined;
    const where = andWhere(viewable, archived);
    const [docs, count] = await Promise.all([
      // The newest `limit` of each entity are the candidates for ranking.
      ctx.store.find(entity.plural, { where, text: q, limit }),
      ctx.store.count(entity.plural, { where, text: q }),
    ]);
    totalCount += count;
    const shown = shownText(entity);
    for (const doc of docs)
      ranked.push({
        hit: toHit(entity.plural, shown, doc, terms),
        score: score(shown, doc, terms),
        updatedAt: String(doc.updatedAt ?? ''),
      });
  }
  ranked.sort(
    (a, b) => b.score - a.score || b.updatedAt.localeCompare(a.updatedAt) || b.hit.id.localeCompare(a.hit.id),
  );
  return { items: ranked.slice(0, limit).map((r) => r.hit), totalCount };
}

/** Where a record's shown text lies: its title field and the other searchable fields that may be shown. */
interface ShownText {
  title: string | undefined;
  others: string[];
}

/**
 * Searchable fields that are neither hidden nor encrypted (none is under access rules); the title
 * is the first of TITLE_FIELDS the entity has.
 */
function shownText(entity: EntityModel): ShownText {
  const fields = new Map(entity.fields.map((f) => [f.name, f]));
  const shown = entity.searchFields.filter((name) => {
    const field = fields.get(name);
    return field && !field.hidden && field.type !== 'encryptedKey';
  });
  // A field under access rules is never a hit's title: neither shown nor ranked by, for anyone.
  const strings = new Set(
    entity.fields.filter((f) => f.type === 'string' && !f.hidden && !f.access).map((f) => f.name),
  );
  const title = TITLE_FIELDS.find((name) => strings.has(name)) ?? shown[0];
  return { title, others: shown.filter((f) => f !== title) };
}

function textOf(value: unknown): string {
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'string').join(', ');
  return typeof value === 'string' ? value : '';
}

function toHit(entity: string, shown: ShownText, doc: Doc, terms: string[]): SearchHit {
  const title = (shown.title && textOf(doc[shown.title])) || doc.id;
  return { entity, id: doc.id, title, snippet: snippet(shown, doc, terms) };
}

/**
 * Up to SNIPPET_LENGTH characters around the first term found in a field other than the title;
 * when only the title matched, the start of the first other field with text.
 */
function snippet(shown: ShownText, doc: Doc, terms: string[]): string {
  const texts = shown.others.map((f) => textOf(doc[f]).replace(/\s+/g, ' ').trim()).filter(Boolean);
  for (const text of texts) {
    const at = firstMatch(text, terms);
    if (at >= 0) return excerpt(text, Math.max(0, at - 40));
  }
  return texts.length > 0 ? excerpt(texts[0], 0) : '';
}

function excerpt(text: string, from: number): string {
  if (text.length <= SNIPPET_LENGTH) return text;
  const start = Math.min(from, text.length - SNIPPET_LENGTH);
  return `${start > 0 ? '…' : ''}${text.slice(start, start + SNIPPET_LENGTH).trim()}${start + SNIPPET_LENGTH < text.length ? '…' : ''}`;
}

/** Index of the first word of `text` that starts with one of the terms, or -1. */
function firstMatch(text: string, terms: string[]): number {
  const words = /[\p{L}\p{N}]+/gu;
  for (let match = words.exec(text); match; match = words.exec(text)) {
    const word = normalize(match[0]);
    if (terms.some((term) => word.startsWith(term))) return match.index;
  }
  return -1;
}

/** Per term: 4 for a whole word in the title, 3 for a prefix there, 2 for a whole word elsewhere, 1 for a prefix. */
function score(shown: ShownText, doc: Doc, terms: string[]): number {
  const wordsOf = (value: unknown) =>
    normalize(textOf(value))
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
  const title = shown.title ? wordsOf(doc[shown.title]) : [];
  const rest = shown.others.flatMap((f) => wordsOf(doc[f]));
  let total = 0;
  for (const term of terms) {
    if (title.includes(term)) total += 4;
    else if (title.some((w) => w.startsWith(term))) total += 3;
    else if (rest.includes(term)) total += 2;
    else if (rest.some((w) => w.startsWith(term))) total += 1;
  }
  return total;
}
