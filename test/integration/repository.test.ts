import { describe, expect, it } from 'vitest';
import { registry, repositories } from '../../generated/index.js';
import { SqliteStore } from '../../runtime/store/sqlite/sqliteStore.js';

describe('generated repositories', () => {
  it('create, find with typed filters and sort, count, update, increment and remove', async () => {
    const store = SqliteStore.open(':memory:');
    await store.init(registry.model);
    const repos = repositories(store);
    const owner = '0123456789abcdef01234567';
    const a = await repos.articles.create(
      { title: 'B', body: 'x', kind: 'guide', tags: ['t1'], views: 1 },
      { ownerId: owner },
    );
    await repos.articles.create({ title: 'a', body: 'y', kind: 'news', tags: ['t2'], views: 5 }, { ownerId: owner });
    expect(a.id).toMatch(/^[0-9a-f]{24}$/);
    expect(a.archivedAt).toBeNull();

    const guides = await repos.articles.find({ filter: { kind: 'guide' } });
    expect(guides.map((r) => r.title)).toEqual(['B']);
    const sorted = await repos.articles.find({ sort: [{ field: 'title', direction: 'asc' }] });
    expect(sorted.map((r) => r.title)).toEqual(['a', 'B']);
    expect(await repos.articles.count({ tags: ['t1', 't2'] })).toBe(2);
    expect(await repos.articles.count({ kind: ['news', 'opinion'] })).toBe(1);

    expect((await repos.articles.update(a.id, { title: 'C' }))!.title).toBe('C');
    expect((await repos.articles.increment(a.id, { views: 4 }))!.views).toBe(5);
    expect(await repos.articles.remove(a.id)).toBe(true);
    expect(await repos.articles.get(a.id)).toBeNull();
    await store.close();
  });

  it('filters with the list language’s operators, pages by cursor and aggregates', async () => {
    const store = SqliteStore.open(':memory:');
    await store.init(registry.model);
    const repos = repositories(store);
    const owner = '0123456789abcdef01234567';
    for (const [i, name] of ['Lámpara', 'lamp shade', 'Desk', 'Chair', 'Shelf'].entries()) {
      await repos.products.create(
        {
          name,
          sku: `S-${i}`,
          price: i * 10,
          stock: i < 2 ? 0 : 5,
          tags: i % 2 === 0 ? ['even'] : ['odd'],
          ...(i === 0 ? {} : { supplierEmail: `s${i}@example.test` }),
        },
        { ownerId: owner },
      );
    }
    const names = async (options: Parameters<typeof repos.products.find>[0]) =>
      (await repos.products.find({ ...options, sort: [{ field: 'name', direction: 'asc' }] })).map((p) => p.name);
    expect(await names({ filter: { price: { gte: 10, lt: 40 } } })).toEqual(['Chair', 'Desk', 'lamp shade']);
    expect(await names({ filter: { name: { contains: 'LAMP' } } })).toEqual(['lamp shade', 'Lámpara']);
    expect(await names({ filter: { name: { startsWith: 'sh' } } })).toEqual(['Shelf']);
    expect(await names({ filter: { stock: { ne: 0 } } })).toEqual(['Chair', 'Desk', 'Shelf']);
    expect(await names({ filter: { stock: { in: [5] }, price: { gt: 20 } } })).toEqual(['Chair', 'Shelf']);
    expect(await names({ filter: { tags: { eq: 'odd' } } })).toEqual(['Chair', 'lamp shade']);
    expect(await names({ filter: { tags: { nin: ['odd'] } } })).toEqual(['Desk', 'Lámpara', 'Shelf']);
    expect(await names({ filter: { supplierEmail: { exists: false } } })).toEqual(['Lámpara']);
    expect(await names({ filter: { supplierEmail: null, price: 0 } })).toEqual(['Lámpara']);
    await expect(repos.products.find({ filter: { price: { near: 3 } as never } })).rejects.toThrow(
      'products.price: unknown filter operator "near"',
    );

    const first = await repos.products.page({ limit: 2 });
    const second = await repos.products.page({ limit: 2, after: first.next! });
    const third = await repos.products.page({ limit: 2, after: second.next! });
    expect([...first.items, ...second.items, ...third.items].map((p) => p.name)).toEqual([
      'Shelf',
      'Chair',
      'Desk',
      'lamp shade',
      'Lámpara',
    ]);
    expect(third.next).toBeNull();
    await expect(
      repos.products.find({ after: first.next!, sort: [{ field: 'name', direction: 'asc' }] }),
    ).rejects.toThrow(/follows id order/);

    const byStock = await repos.products.aggregate({
      groupBy: [{ field: 'stock' }],
      measures: [{ op: 'sum', field: 'price' }],
      sort: [{ column: 'key.stock', direction: 'asc' }],
    });
    expect(byStock.groups.map((g) => [g.key.stock, g.count, g.values.sum?.price])).toEqual([
      [0, 2, 10],
      [5, 3, 90],
    ]);
    await store.close();
  });
});
