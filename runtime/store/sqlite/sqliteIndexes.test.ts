import { describe, expect, it } from 'vitest';
import { conformanceModel } from '../../../test/conformance/storeConformance.js';
import { SqliteStore } from './sqliteStore.js';

describe('SQLite indexes', () => {
  it('lets equality filters on text fields use an index, and ordering use the natural-order key', async () => {
    const store = SqliteStore.open(':memory:');
    await store.init(conformanceModel);
    const db = (store as unknown as { shared: { db: import('better-sqlite3').Database } }).shared.db;
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(' | ');
    expect(plan(`SELECT * FROM "things" WHERE "kind" = 'a' ORDER BY "id" DESC LIMIT 5`)).toMatch(
      /USING INDEX fx_things_kind/,
    );
    expect(plan(`SELECT * FROM "things" ORDER BY "_sk_name" ASC, "id" ASC LIMIT 5`)).toMatch(
      /USING INDEX sk_things_name/,
    );
    await store.close();
  });
});
