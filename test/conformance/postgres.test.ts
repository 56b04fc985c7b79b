import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { newId } from '../../runtime/entities/prepareWrite.js';
import { PgStore } from '../../runtime/store/postgres/pgStore.js';
import { UniqueConflict } from '../../runtime/store/types.js';
import { conformanceModel, storeConformance } from './storeConformance.js';

// Runs under `npm run test:postgres` (CI runs it); it needs a PostgreSQL server at POSTGRES_URL.
const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// Each run gets its own schema, so runs never see each other's tables.
storeConformance('postgres', async () =>
  PgStore.open(POSTGRES_URL, { schema: `conformance_${randomUUID().replace(/-/g, '')}` }),
);

describe('postgres indexes over long text', () => {
  it('rebuilds a unique index an older version made over the whole value, then keeps a 900 kB value unique', async () => {
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(`CREATE TABLE ${schema}.things ("id" TEXT PRIMARY KEY, "code" TEXT COLLATE "C")`);
      await client.query(`CREATE UNIQUE INDEX ux_things_code ON ${schema}.things ("code")`);
      const store = PgStore.open(POSTGRES_URL, { schema });
      try {
        await store.init(conformanceModel);
        const { rows } = await client.query(
          `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'ux_things_code'`,
          [schema],
        );
        expect(rows[0].indexdef).toContain('md5(');
        const long = 'x'.repeat(900_000);
        const doc = () => ({
          id: newId(),
          ownerId: '0'.repeat(24),
          name: 'n',
          code: long,
          createdAt: '2024-01-01T00:00:00.000Z',
          updatedAt: '2024-01-01T00:00:00.000Z',
        });
        await store.insert('things', doc());
        await expect(store.insert('things', doc())).rejects.toBeInstanceOf(UniqueConflict);
        expect(await store.count('things', { where: { field: 'code', op: 'eq', value: long } })).toBe(1);
      } finally {
        await store.close();
      }
    } finally {
      await client.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await client.end();
    }
  });
});

describe('postgres transactions', () => {
  it('runs a transaction again when it loses a deadlock, so both callers succeed', async () => {
    const store = PgStore.open(POSTGRES_URL, { schema: `conformance_${randomUUID().replace(/-/g, '')}` });
    try {
      await store.init(conformanceModel);
      const doc = (name: string) => ({
        id: newId(),
        ownerId: '0'.repeat(24),
        name,
        n: 0,
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
      });
      const [a, b] = [await store.insert('things', doc('a')), await store.insert('things', doc('b'))];
      let attempts = 0;
      const crossing = (first: string, second: string) =>
        store.transaction(async (tx) => {
          attempts++;
          await tx.increment('things', first, { n: 1 });
          await new Promise((resolve) => setTimeout(resolve, 300));
          await tx.increment('things', second, { n: 1 });
        });
      await Promise.all([crossing(a.id, b.id), crossing(b.id, a.id)]);
      expect(attempts).toBe(3);
      expect((await store.get('things', a.id))!.n).toBe(2);
      expect((await store.get('things', b.id))!.n).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('queues overlapping queries inside a transaction on its one connection (pg deprecates running them at once)', async () => {
    const store = PgStore.open(POSTGRES_URL, { schema: `conformance_${randomUUID().replace(/-/g, '')}` });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      await store.init(conformanceModel);
      const doc = (name: string) => ({
        id: newId(),
        ownerId: '0'.repeat(24),
        name,
        n: 0,
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
      });
      const ids = await store.transaction(async (tx) => {
        const inserted = await Promise.all(Array.from({ length: 20 }, (_, i) => tx.insert('things', doc(`t${i}`))));
        await Promise.all(inserted.map((d) => tx.increment('things', d.id, { n: 2 })));
        return inserted.map((d) => d.id);
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.includes('already executing a query'))).toEqual([]);
      const stored = await store.find('things', { where: { op: 'in', field: 'id', value: ids } });
      expect(stored.map((d) => d.n)).toEqual(ids.map(() => 2));
    } finally {
      process.off('warning', onWarning);
      await store.close();
    }
  });
});
