import { match } from 'path-to-regexp';
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

  it('matches each route as path-to-regexp does', () => {
    const paths = [
      '/',
      '/bulk',
      '/aggregate',
      '/:id',
      '/:id/versions',
      '/:id/versions/:version',
      '/:id/a_b-c',
      '/:x/:y',
    ];
    const candidates = [
      '',
      '/',
      '/bulk',
      '/BULK',
      '/Bulk',
      '/bulky',
      '/bul',
      '/1',
      '/a.b',
      '/a b',
      '/1/versions',
      '/1/Versions',
      '/1/versions/2',
      '/1/versions/2/3',
      '//versions',
      '/1//2',
      '/1/a_b-c',
      '/1/A_B-C',
      '/x/y',
      '/x/y/z',
      '/aggregate',
      '/ÀGGREGATE',
      '/\u017fulk',
    ];
    for (const path of paths) {
      const table = new EntityRouteTable('/api/v1');
      table.add('things', [['GET', path, handler(path)]]);
      const expected = match(path, { decode: false });
      for (const candidate of candidates) {
        const url = `/api/v1/things${candidate === '/' ? '' : candidate}`;
        // The table leaves trailing slashes to Express.
        if (candidate.endsWith('/') && candidate !== '/') continue;
        const found = expected(candidate === '' ? '/' : candidate);
        const params = table.find('GET', url)?.params;
        expect(params && { ...params }, `${path} ${candidate}`).toEqual(found ? { ...found.params } : undefined);
      }
    }
  });
});
