import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/testServer.js';

// For random data and random combinations of comparison filters, the list's totalCount equals the
// aggregation's count and a brute-force count over the records, computed here independently of
// the store's translation; each group's count and sum equal brute force too.

interface Product {
  name: string;
  sku: string;
  price: number;
  stock: number;
  tags: string[];
  supplierEmail?: string;
}

const WORDS = ['Lámpara', 'lamp', 'CHAIR', 'chaise', 'Desk', 'déco', 'Item 10', 'item 2', '50%_off'];
const TAGS = ['home', 'office', 'light', 'sale'];
/** Lower case without accents, as the list query docs say the default collation folds. */
const fold = (text: string) => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

type Condition = { query: string; holds: (p: Product) => boolean };

const number = (field: 'price' | 'stock', values: fc.Arbitrary<number>) =>
  fc.oneof(
    ...(['gt', 'gte', 'lt', 'lte', 'eq', 'ne'] as const).map((op) =>
      values.map(
        (v): Condition => ({
          query: `${field}[${op}]=${v}`,
          holds: (p) =>
            ({
              gt: p[field] > v,
              gte: p[field] >= v,
              lt: p[field] < v,
              lte: p[field] <= v,
              eq: p[field] === v,
              ne: p[field] !== v,
            })[op],
        }),
      ),
    ),
    fc
      .uniqueArray(values, { minLength: 1, maxLength: 4 })
      .chain((list) =>
        fc.constantFrom<Condition>(
          { query: `${field}[in]=${list.join(',')}`, holds: (p) => list.includes(p[field]) },
          { query: `${field}[nin]=${list.join(',')}`, holds: (p) => !list.includes(p[field]) },
        ),
      ),
  );

const condition: fc.Arbitrary<Condition> = fc.oneof(
  number(
    'price',
    fc.integer({ min: 0, max: 60 }).map((n) => n / 2),
  ),
  number('stock', fc.integer({ min: 0, max: 10 })),
  fc.constantFrom(...WORDS, 'AMP', 'é', '%', '_', 'ite').chain((word) =>
    fc.constantFrom<Condition>(
      {
        query: `name[contains]=${encodeURIComponent(word)}`,
        holds: (p) => fold(p.name).includes(fold(word)),
      },
      {
        query: `name[startsWith]=${encodeURIComponent(word)}`,
        holds: (p) => fold(p.name).startsWith(fold(word)),
      },
    ),
  ),
  fc
    .uniqueArray(fc.constantFrom(...TAGS), { minLength: 1, maxLength: 3 })
    .chain((list) =>
      fc.constantFrom<Condition>(
        { query: `tags[in]=${list.join(',')}`, holds: (p) => p.tags.some((t) => list.includes(t)) },
        { query: `tags[nin]=${list.join(',')}`, holds: (p) => !p.tags.some((t) => list.includes(t)) },
      ),
    ),
  fc.boolean().map(
    (exists): Condition => ({
      query: `supplierEmail[exists]=${exists}`,
      holds: (p) => (p.supplierEmail !== undefined) === exists,
    }),
  ),
);

describe('comparison filters, property', () => {
  let server: TestServer;
  let admin: { token: string };
  const products: Product[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
    const random = fc.sample(
      fc.record({
        name: fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom('', ' Grande', ' mini')).map(([a, b]) => a + b),
        price: fc.integer({ min: 0, max: 60 }).map((n) => n / 2),
        stock: fc.integer({ min: 0, max: 10 }),
        tags: fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 }),
        supplierEmail: fc.option(fc.constantFrom('a@x.test', 'b@y.test'), { nil: undefined }),
      }),
      { numRuns: 120, seed: 17 },
    );
    for (const [i, p] of random.entries()) products.push({ ...p, sku: `P-${i}` });
    const made = await server.call('POST', '/api/v1/products/bulk', { token: admin.token, body: { items: products } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  });
  afterAll(() => server.close());

  it('counts and sums what a brute-force filter over the records counts and sums', async () => {
    await fc.assert(
      fc.asyncProperty(
        // One value per field and operator (a repeated one is a 400 of its own).
        fc.uniqueArray(condition, { minLength: 1, maxLength: 3, selector: (c) => c.query.split('=')[0] }),
        async (conditions) => {
          const query = conditions.map((c) => c.query).join('&');
          const res = await server.call('GET', `/api/v1/products?${query}&limit=1`, { token: admin.token });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          const matching = products.filter((p) => conditions.every((c) => c.holds(p)));
          expect(res.body.data.totalCount, query).toBe(matching.length);

          const grouped = await server.call('GET', `/api/v1/products/aggregate?${query}&groupBy=stock&sum=price`, {
            token: admin.token,
          });
          expect(grouped.status, JSON.stringify(grouped.body)).toBe(200);
          const groups = grouped.body.data.groups as {
            key: { stock: number };
            count: number;
            sum: { price: number };
          }[];
          expect(
            groups.reduce((n, g) => n + g.count, 0),
            query,
          ).toBe(matching.length);
          const stocks = [...new Set(matching.map((p) => p.stock))].sort((a, b) => a - b);
          expect(groups.map((g) => g.key.stock)).toEqual(stocks);
          expect(grouped.body.data.totalGroups).toBe(stocks.length);
          for (const group of groups) {
            const members = matching.filter((p) => p.stock === group.key.stock);
            expect(group.count).toBe(members.length);
            expect(group.sum.price).toBeCloseTo(
              members.reduce((sum, p) => sum + p.price, 0),
              9,
            );
          }
        },
      ),
      { numRuns: 60, seed: 20261124 },
    );
  });
});
