import { describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { ApiError } from '../errors/apiError.js';
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
    expect(problems({ views: '99999999999999999999' })).toEqual({ views: `must be an integer from ${-Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}` });
    expect(problems({ views: '1.5' })).toEqual({ views: 'must be an integer' });
    expect(problems({ rating: '1e400' })).toEqual({ rating: 'must be a number' });
    expect(problems({ views: String(Number.MAX_SAFE_INTEGER), rating: '-2.5' })).toBeUndefined();
    expect(parseListQuery(withFilters, { views: '-7' }, options).where).toEqual([{ field: 'views', op: 'eq', value: -7 }]);
  });
});
