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
});
