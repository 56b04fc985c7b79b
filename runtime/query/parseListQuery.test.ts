import { describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import type { ApiError } from '../errors/apiError.js';
import { parseListQuery } from './parseListQuery.js';

const articles = registry.model.entities.find((e) => e.plural === 'articles')!;
const withFilters = { ...articles, filters: ['views', 'rating'] };
const options = { openCursor: () => undefined, entity: () => undefined };

function problems(raw: Record<string, unknown>): Record<string, string> | undefined {
  try {
    parseListQuery(withFilters, raw, options);
    return undefined;
  } catch (error) {
    return (error as ApiError).details;
  }
}

describe('numeric filters', () => {
  it('take an int filter only as a safe integer, a float only as a finite number', () => {
    expect(problems({ views: '99999999999999999999' })).toEqual({
      views: `must be an integer from ${-Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`,
    });
    expect(problems({ views: '1.5' })).toEqual({ views: 'must be an integer' });
    expect(problems({ rating: '1e400' })).toEqual({ rating: 'must be a number' });
    expect(problems({ views: String(Number.MAX_SAFE_INTEGER), rating: '-2.5' })).toBeUndefined();
    expect(parseListQuery(withFilters, { views: '-7' }, options).where).toEqual([
      { field: 'views', op: 'eq', value: -7 },
    ]);
  });
});

const comments = registry.model.entities.find((e) => e.plural === 'comments')!;
const parse = (raw: Record<string, unknown>, entity = articles) => parseListQuery(entity, raw, options);
const refused = (raw: Record<string, unknown>, entity = articles): Record<string, string> => {
  try {
    parseListQuery(entity, raw, options);
  } catch (error) {
    expect((error as ApiError).code).toBe('VALIDATION_ERROR');
    return { ...(error as ApiError).details };
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
};

describe('the list query parser', () => {
  it('defaults to the first 25, newest first, without archived records', () => {
    expect(parse({})).toEqual({ limit: 25, skip: 0, idDirection: 'desc', includeArchived: false, where: [] });
  });

  it('names every unknown parameter, and accepts declared filters only', () => {
    expect(refused({ title: 'x', bogus: '1' })).toEqual({
      title: 'is not a known query parameter',
      bogus: 'is not a known query parameter',
    });
    expect(parse({ kind: 'news' }).where).toEqual([{ field: 'kind', op: 'eq', value: 'news' }]);
  });

  it('takes ids as a list, comma-separated, repeated or as id[in], and refuses what is not one', () => {
    const [a, b] = ['0123456789abcdef01234567', 'fedcba9876543210fedcba98'];
    expect(parse({ id: a }).where).toEqual([{ field: 'id', op: 'eq', value: a }]);
    expect(parse({ id: `${a},${b},${a}` }).where).toEqual([{ field: 'id', op: 'in', value: [a, b] }]);
    expect(parse({ id: [a, b] }).where).toEqual([{ field: 'id', op: 'in', value: [a, b] }]);
    expect(parse({ id: { in: `${a},${b}` } }).where).toEqual([{ field: 'id', op: 'in', value: [a, b] }]);
    expect(refused({ id: 'nope' })).toEqual({ id: '"nope" is not an id of 24 hexadecimal characters' });
    expect(refused({ id: { gt: a } })).toEqual({ id: 'must be ids, comma-separated or repeated' });
    const many = Array.from({ length: 101 }, (_, i) => i.toString(16).padStart(24, '0')).join(',');
    expect(refused({ id: many })).toEqual({ id: 'must be at most 100 ids' });
  });

  it('reads a repeated filter as any of its values, and an array filter as contains', () => {
    expect(parse({ kind: ['news', 'guide'] }).where).toEqual([{ field: 'kind', op: 'in', value: ['news', 'guide'] }]);
    expect(parse({ tags: ['a', 'b'] }).where).toEqual([{ field: 'tags', op: 'contains', value: ['a', 'b'] }]);
    expect(parse({ approved: 'true' }, comments).where).toEqual([{ field: 'approved', op: 'eq', value: true }]);
  });

  it('names every bad filter value at once', () => {
    expect(refused({ kind: 'gossip', featured: 'yes', author: 'nope' })).toEqual({
      kind: 'must be one of news, opinion, guide',
      featured: 'must be true or false',
      author: 'must be an id of 24 hexadecimal characters',
    });
  });

  it('turns page into skip, and refuses page with skip, or a cursor with an offset or a custom sort', () => {
    expect(parse({ page: '3', limit: '10' })).toMatchObject({ limit: 10, skip: 20 });
    expect(parse({ offset: '5' })).toMatchObject({ skip: 5 });
    expect(refused({ page: '2', skip: '5' })).toEqual({ skip: 'cannot be combined with page' });
    expect(refused({ cursor: 'abc', sort: 'title' })).toMatchObject({
      cursor: 'cannot be combined with a custom sort',
    });
    expect(refused({ cursor: 'abc' })).toEqual({ cursor: 'is not a valid cursor' });
  });

  it('bounds limit, page and the search text', () => {
    expect(refused({ limit: '0' })).toEqual({ limit: 'must be an integer from 1 to 200' });
    expect(refused({ limit: '201' })).toEqual({ limit: 'must be an integer from 1 to 200' });
    expect(refused({ page: '1.5' })).toEqual({ page: 'must be an integer >= 1' });
    expect(refused({ q: 'x'.repeat(501) })).toEqual({ q: 'must be at most 500 characters' });
    expect(refused({ limit: ['1', '2'] })).toEqual({ limit: 'must be given once, as a string' });
  });

  it('reads sort as a list with - for descending; an unsortable field falls back to the id order', () => {
    expect(parse({ sort: '-views,title' }).sort).toEqual([
      { field: 'views', direction: 'desc' },
      { field: 'title', direction: 'asc' },
    ]);
    expect(parse({ sortBy: 'title', sortDir: 'desc' }).sort).toEqual([{ field: 'title', direction: 'desc' }]);
    const byId = parse({ sort: 'id' });
    expect(byId.sort).toBeUndefined();
    expect(byId.idDirection).toBe('asc');
    expect(refused({ sort: 'title', sortBy: 'views' })).toEqual({ sortBy: 'cannot be combined with sort' });
  });

  it('checks each collation option under its own name', () => {
    expect(parse({ sort: { field: 'title', collation: { locale: 'de', strength: '1' } } }).collation).toEqual({
      locale: 'de',
      strength: 1,
    });
    expect(refused({ sort: { field: 'title', collation: { locale: '!', strength: '9', x: '1' } } })).toEqual({
      'sort.collation.locale': 'must be a locale such as en or de-DE',
      'sort.collation.strength': 'must be 1, 2 or 3',
      'sort.collation.x': 'is not a known collation option',
    });
    // Shaped like a language tag but not one, or a language without collation rules.
    for (const locale of ['true', 'zz', 'qaa', 'en_', 'x'.repeat(9)]) {
      expect(refused({ sort: { field: 'title', collation: { locale } } })).toEqual({
        'sort.collation.locale': 'must be a locale such as en or de-DE',
      });
    }
    expect(parse({ sort: { field: 'title', collation: { locale: 'de_DE' } } }).collation).toEqual({ locale: 'de_DE' });
  });

  it('selects known visible fields once each', () => {
    expect(parse({ select: 'title,views,title' }).select).toEqual(['title', 'views']);
    expect(parse({ select: ['title', 'kind'] }).select).toEqual(['title', 'kind']);
    expect(refused({ select: 'title,secret' })).toEqual({ select: 'unknown field "secret"' });
  });

  it('turns date parameters into an inclusive range on the date field', () => {
    expect(parse({ dateFrom: '2026-01-01', dateTo: '2026-01-31' }).where).toEqual([
      { field: 'createdAt', op: 'gte', value: '2026-01-01T00:00:00.000Z' },
      { field: 'createdAt', op: 'lte', value: '2026-01-31T23:59:59.999Z' },
    ]);
    expect(parse({ dateMonth: '2026-02', dateField: 'publishedAt' }).where).toEqual([
      { field: 'publishedAt', op: 'gte', value: '2026-02-01T00:00:00.000Z' },
      { field: 'publishedAt', op: 'lte', value: '2026-02-28T23:59:59.999Z' },
    ]);
    expect(refused({ dateField: 'title' })).toMatchObject({
      dateField: expect.stringMatching(/^must name a date field/),
    });
    expect(refused({ dateFrom: 'yesterday' })).toEqual({ dateFrom: 'must be an ISO 8601 date or date-time' });
  });

  it('takes includeArchived only as true or false', () => {
    expect(parse({ includeArchived: 'true' }).includeArchived).toBe(true);
    expect(refused({ includeArchived: '1' })).toEqual({ includeArchived: 'must be true or false' });
  });
});
