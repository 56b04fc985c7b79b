import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('comparison filters', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  const names = async (query: string, token = admin.token) => {
    const res = await server.call('GET', `/api/v1/products?${query}&limit=200`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.data.items as { name: string }[]).map((p) => p.name).sort();
  };
  const refused = async (query: string, path = 'products') => {
    const res = await server.call('GET', `/api/v1/${path}?${query}`, { token: admin.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    return res.body.error.details as Record<string, string>;
  };

  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
    for (const product of [
      {
        name: 'Lámpara Grande',
        sku: 'L-1',
        price: 19.5,
        stock: 3,
        tags: ['home', 'light'],
        supplierEmail: 'a@lux.test',
      },
      { name: 'Chair', sku: 'C-1', price: 120, stock: 0, tags: ['home'] },
      { name: 'Desk', sku: 'D-1', price: 250.25, stock: 7, tags: ['office'], supplierEmail: 'b@wood.test' },
      { name: '50%_off Sign', sku: 'S-1', price: 5, stock: 12, tags: [] },
    ]) {
      const made = await server.call('POST', '/api/v1/products', { token: admin.token, body: product });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
  });
  afterAll(() => server.close());

  it('compares numbers: gt, gte, lt, lte, ne, in, nin, and ranges', async () => {
    expect(await names('price[gt]=100')).toEqual(['Chair', 'Desk']);
    expect(await names('price[gte]=120')).toEqual(['Chair', 'Desk']);
    expect(await names('price[lt]=19.5')).toEqual(['50%_off Sign']);
    expect(await names('price[lte]=19.5')).toEqual(['50%_off Sign', 'Lámpara Grande']);
    expect(await names('price[gt]=10&price[lt]=200')).toEqual(['Chair', 'Lámpara Grande']);
    expect(await names('stock[ne]=0')).toEqual(['50%_off Sign', 'Desk', 'Lámpara Grande']);
    expect(await names('stock[in]=0,7')).toEqual(['Chair', 'Desk']);
    expect(await names('stock[in]=0&stock[in]=12')).toEqual(['50%_off Sign', 'Chair']);
    expect(await names('stock[nin]=0,7')).toEqual(['50%_off Sign', 'Lámpara Grande']);
    expect(await names('stock[eq]=3')).toEqual(['Lámpara Grande']);
  });

  it('matches text ignoring case and accents, with LIKE wildcards taken literally', async () => {
    expect(await names('name[contains]=LAMP')).toEqual(['Lámpara Grande']);
    expect(await names('name[contains]=grande')).toEqual(['Lámpara Grande']);
    expect(await names('name[startsWith]=lampara')).toEqual(['Lámpara Grande']);
    expect(await names('name[startsWith]=grande')).toEqual([]);
    expect(await names(`name[contains]=${encodeURIComponent('%_')}`)).toEqual(['50%_off Sign']);
    expect(await names(`name[contains]=${encodeURIComponent('%')}`)).toEqual(['50%_off Sign']);
    expect(await names('name[contains]=_o')).toEqual(['50%_off Sign']);
    expect(await names('sku[ne]=L-1&name[contains]=a')).toEqual(['Chair']);
    expect(await names('name[in]=Desk,Chair')).toEqual(['Chair', 'Desk']);
    expect(await names('name[nin]=Desk,Chair')).toEqual(['50%_off Sign', 'Lámpara Grande']);
  });

  it('asks whether a value exists, and filters arrays by any or none of their elements', async () => {
    expect(await names('supplierEmail[exists]=false')).toEqual(['50%_off Sign', 'Chair']);
    expect(await names('supplierEmail[exists]=true')).toEqual(['Desk', 'Lámpara Grande']);
    expect(await names('supplierEmail[contains]=wood')).toEqual(['Desk']);
    expect(await names('tags[in]=office,light')).toEqual(['Desk', 'Lámpara Grande']);
    expect(await names('tags[nin]=home')).toEqual(['50%_off Sign', 'Desk']);
    expect(await names('tags[eq]=home')).toEqual(['Chair', 'Lámpara Grande']);
    expect(await names('tags=home')).toEqual(['Chair', 'Lámpara Grande']);
  });

  it('combines with q, sort, select and totals', async () => {
    const res = await server.call('GET', '/api/v1/products?price[gt]=10&sort=-price&select=name', {
      token: admin.token,
    });
    expect(res.body.data.items).toEqual([
      { id: expect.any(String), name: 'Desk' },
      { id: expect.any(String), name: 'Chair' },
      { id: expect.any(String), name: 'Lámpara Grande' },
    ]);
    expect(res.body.data.totalCount).toBe(3);
    expect(await names('q=desk&price[lt]=1000')).toEqual(['Desk']);
    expect(await names('q=desk&price[lt]=100')).toEqual([]);
  });

  it('compares dates and ids, and never widens what the caller may see', async () => {
    const user = await server.user();
    const other = await server.user();
    const product = (
      await server.call('POST', '/api/v1/products', {
        token: admin.token,
        body: { name: 'Crate', sku: 'K-1', price: 1, stock: 100 },
      })
    ).body.data;
    for (const [token, quantity] of [
      [user.token, 1],
      [user.token, 5],
      [other.token, 9],
    ] as const) {
      const placed = await server.call('POST', '/api/v1/orders', {
        token,
        body: { product: product.id, quantity },
      });
      expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    }
    const mine = await server.call('GET', `/api/v1/orders?quantity[gt]=0&product[in]=${product.id}`, {
      token: user.token,
    });
    expect(mine.body.data.items.map((o: { quantity: number }) => o.quantity).sort()).toEqual([1, 5]);
    const all = await server.call('GET', '/api/v1/orders?quantity[gte]=5', { token: admin.token });
    expect(all.body.data.items.map((o: { quantity: number }) => o.quantity).sort()).toEqual([5, 9]);

    await server.call('POST', '/api/v1/projects', {
      token: admin.token,
      body: { name: 'Early', code: 'F-E', dueAt: '2026-03-01T00:00:00Z' },
    });
    await server.call('POST', '/api/v1/projects', {
      token: admin.token,
      body: { name: 'Late', code: 'F-L', dueAt: '2026-09-01T00:00:00Z' },
    });
    await server.call('POST', '/api/v1/projects', { token: admin.token, body: { name: 'Never', code: 'F-N' } });
    const projects = async (query: string) =>
      (await server.call('GET', `/api/v1/projects?${query}`, { token: admin.token })).body.data.items
        .map((p: { name: string }) => p.name)
        .sort();
    expect(await projects('dueAt[gt]=2026-06-01')).toEqual(['Late']);
    expect(await projects('dueAt[lte]=2026-06-01T00:00:00%2B02:00')).toEqual(['Early']);
    expect(await projects('dueAt[exists]=false')).toEqual(['Never']);
    expect(await projects('active[eq]=true&active[ne]=false')).toEqual(['Early', 'Late', 'Never']);
  });

  it('refuses operators a type does not take, unknown operators and bad values, naming each parameter', async () => {
    expect((await refused('price[contains]=1'))['price[contains]']).toMatch(/does not apply to float.*gt/);
    expect((await refused('featured[gt]=true', 'articles'))['featured[gt]']).toMatch(/does not apply to boolean/);
    expect((await refused('price[near]=1'))['price[near]']).toMatch(/is not an operator/);
    expect((await refused('price[gt]=abc'))['price[gt]']).toMatch(/number/);
    expect((await refused('stock[gt]=1.5'))['stock[gt]']).toMatch(/integer/);
    expect((await refused('dueAt[gt]=soon', 'projects'))['dueAt[gt]']).toMatch(/ISO 8601/);
    expect((await refused('supplierEmail[exists]=maybe'))['supplierEmail[exists]']).toMatch(/true or false/);
    expect((await refused('name[contains]='))['name[contains]']).toMatch(/1 to 200/);
    expect((await refused('price[gt]=1&price[gt]=2'))['price[gt]']).toMatch(/once/);
    const many = Array.from({ length: 101 }, (_, i) => i).join(',');
    expect((await refused(`stock[in]=${many}`))['stock[in]']).toMatch(/at most 100/);
    expect((await refused('description[gt]=1')).description).toMatch(/not a known/);
    const both = await refused('price[gt]=x&stock[lt]=y');
    expect(Object.keys(both).sort()).toEqual(['price[gt]', 'stock[lt]']);
  });

  it('is typed in the generated client', async () => {
    const api = createClient({ baseUrl: server.url, token: admin.token });
    const expensive = await api.products.list({ price: { gt: 100 }, sort: 'price' });
    expect(expensive.items.map((p) => p.name)).toEqual(['Chair', 'Desk']);
    const some = await api.products.list({ stock: { in: [0, 12] }, name: { contains: 'sign' } });
    expect(some.items.map((p) => p.name)).toEqual(['50%_off Sign']);
  });
});
