import type { Registry } from '../../runtime/context/defineRegistry.js';
import { openStore } from '../../runtime/store/openStore.js';
import { newId } from '../../runtime/write/prepareWrite.js';

/** BENCH_RECORDS=1000000 seeds a million (the scale cases); 100,000 by default. */
export const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const KINDS = ['news', 'opinion', 'guide'];
/** Article n was created n minutes before this instant, so date ranges select slices of the data. */
export const SEED_EPOCH = Date.parse('2026-01-01T00:00:00.000Z');

/** A database (DATABASE_URL form) with the example app's schema, an admin user and RECORDS articles. */
export async function seed(
  databaseUrl: string,
  registry: Registry,
): Promise<{ adminId: string; articleIds: string[] }> {
  const store = await openStore(databaseUrl, process.cwd());
  await store.init(registry.model);
  const now = new Date().toISOString();
  const adminId = newId();
  await store.insert('users', {
    id: adminId,
    email: 'bench@example.test',
    displayName: 'Bench',
    roles: ['ADMIN'],
    authSource: 'local',
    disabled: false,
    createdAt: now,
    updatedAt: now,
  });
  const articleIds: string[] = [];
  for (let start = 0; start < RECORDS; start += 5000) {
    const batch = Array.from({ length: 5000 }, (_, i) => {
      const n = start + i;
      const id = newId();
      articleIds.push(id);
      return {
        id,
        ownerId: adminId,
        createdAt: new Date(SEED_EPOCH - n * 60_000).toISOString(),
        updatedAt: now,
        archivedAt: null,
        title: `Article ${n}`,
        body: `Body of article ${n} with some words`,
        tags: [`t${n % 10}`],
        status: n % 2 ? 'published' : 'draft',
        views: n % 1000,
        kind: KINDS[n % 3],
        featured: n % 7 === 0,
        related: [],
      };
    });
    await store.insertMany('articles', batch);
  }
  await store.close();
  return { adminId, articleIds };
}
