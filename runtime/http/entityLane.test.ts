import { describe, expect, it } from 'vitest';
import { EntityRouteTable } from './entityLane.js';
import type { EntityRoute } from './entityRoutes.js';

const handler = (name: string) => Object.assign(() => undefined, { label: name });
const ROUTES: EntityRoute[] = [
  ['POST', '/bulk', handler('bulk')],
  ['GET', '/', handler('list')],
  ['POST', '/', handler('create')],
  ['GET', '/:id', handler('get')],
  ['PATCH', '/:id', handler('update')],
  ['GET', '/:id/versions/:version', handler('version')],
];

describe('EntityRouteTable', () => {
  const table = new EntityRouteTable('/api/v1');
  table.add('articles', ROUTES);
  const label = (method: string, url: string) =>
    (table.find(method, url)?.handler as unknown as { label: string } | undefined)?.label;

  it('claims the plain paths of the route table, in its order, with their parameters', () => {
    expect(label('GET', '/api/v1/articles')).toBe('list');
    expect(label('GET', '/api/v1/articles?kind=news&sort=-views')).toBe('list');
    expect(label('POST', '/api/v1/articles/bulk')).toBe('bulk');
    expect(label('GET', '/api/v1/articles/bulk')).toBe('get');
    expect(table.find('GET', '/api/v1/articles/6651a0c3e4b0a1b2c3d4e5f6/versions/3')).toMatchObject({
      prefix: '/api/v1/articles',
      path: '/:id/versions/:version',
      params: { id: '6651a0c3e4b0a1b2c3d4e5f6', version: '3' },
    });
  });

  it('leaves to Express what it matches in its own ways, and what is not a route', () => {
    for (const [method, url] of [
      ['GET', '/api/v1/articles/'],
      ['GET', '/api/v1/Articles'],
      ['GET', '/api/v1/articles/a%2Fb'],
      ['HEAD', '/api/v1/articles'],
      ['DELETE', '/api/v1/articles/1'],
      ['GET', '/api/v1/comments'],
      ['GET', '/api/v1'],
      ['GET', '/api/v1/articles/1/2'],
      ['GET', '/setup'],
    ])
      expect(table.find(method, url), `${method} ${url}`).toBeUndefined();
  });
});
