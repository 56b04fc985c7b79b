import { describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import type { ApiError } from '../errors/apiError.js';
import { parseAggregateQuery } from './parseAggregateQuery.js';

const articles = registry.model.entities.find((e) => e.plural === 'articles')!;
// A hidden field, as a password hash would be: aggregating it must look like naming no field at all.
const withHidden = {
  ...articles,
  fields: [
    ...articles.fields,
    { ...articles.fields.find((f) => f.name === 'views')!, name: 'secretScore', hidden: true },
  ],
};

function problems(raw: Record<string, unknown>): Record<string, string> | undefined {
  try {
    parseAggregateQuery(withHidden, raw);
    return undefined;
  } catch (error) {
    return (error as ApiError).details;
  }
}

describe('parseAggregateQuery', () => {
  it('reads keys, buckets, measures, sort and page', () => {
    expect(
      parseAggregateQuery(articles, {
        groupBy: 'kind,publishedAt:week',
        timeZone: 'Europe/Berlin',
        sum: ['views', 'rating'],
        max: 'publishedAt',
        sort: '-sum.views,kind,+count',
        limit: '10',
        skip: '20',
        status: 'published',
      }),
    ).toEqual({
      where: [{ field: 'status', op: 'eq', value: 'published' }],
      includeArchived: false,
      groupBy: [{ field: 'kind' }, { field: 'publishedAt', bucket: 'week' }],
      timeZone: 'Europe/Berlin',
      measures: [
        { op: 'sum', field: 'views' },
        { op: 'sum', field: 'rating' },
        { op: 'max', field: 'publishedAt' },
      ],
      sort: [
        { column: 'sum.views', direction: 'desc' },
        { column: 'key.kind', direction: 'asc' },
        { column: 'count', direction: 'asc' },
      ],
      limit: 10,
      skip: 20,
    });
  });

  it('groups a date field without a unit by day, in UTC unless told', () => {
    const query = parseAggregateQuery(articles, { groupBy: 'createdAt' });
    expect(query.groupBy).toEqual([{ field: 'createdAt', bucket: 'day' }]);
    expect(query.timeZone).toBe('UTC');
    expect(query.limit).toBe(100);
  });

  it('treats hidden fields as unknown ones', () => {
    expect(problems({ groupBy: 'secretScore' })).toEqual({ groupBy: 'unknown field "secretScore"' });
    expect(problems({ sum: 'secretScore' })).toEqual({ sum: 'unknown field "secretScore"' });
    expect(problems({ min: 'secretScore' })).toEqual({ min: 'unknown field "secretScore"' });
  });

  it('names every bad parameter in one answer', () => {
    expect(
      problems({ groupBy: ['kind', { a: 1 }], sum: 'views', avg: '', timeZone: 'Nowhere/City', limit: '0' }),
    ).toEqual({
      groupBy: 'must be names, comma-separated or repeated',
      avg: 'must name at least one field',
      timeZone: 'must be an IANA time zone such as Europe/Berlin, or UTC',
      limit: 'must be an integer from 1 to 1000',
    });
    const many = Object.fromEntries(
      ['sum', 'avg', 'min', 'max'].map((op) => [
        op,
        Array(6)
          .fill('views')
          .map((v, i) => (i % 2 ? 'rating' : v)),
      ]),
    );
    expect(parseAggregateQuery(articles, many).measures).toHaveLength(8);
  });
});
