import { describe, expect, it } from 'vitest';
import { modelFromInputs } from '../../../generator/build.js';
import { conformanceModel, THINGS_ENTITY } from '../../../test/conformance/storeConformance.js';
import { SqliteStore } from './sqliteStore.js';

const rawDb = (store: SqliteStore) =>
  (store as unknown as { shared: { db: import('better-sqlite3').Database } }).shared.db;

describe('SQLite indexes', () => {
  it('serve a filter over live records in id order, with its count, and a sortable field by its natural-order key', async () => {
    const store = SqliteStore.open(':memory:');
    await store.init(conformanceModel);
    const db = rawDb(store);
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(' | ');
    const filtered = plan(
      `SELECT * FROM "things" WHERE "kind" = 'a' AND "archivedAt" IS NULL ORDER BY "id" DESC LIMIT 5`,
    );
    expect(filtered).toMatch(/USING INDEX ix_things_kind_id_live/);
    expect(filtered).not.toMatch(/TEMP B-TREE/);
    expect(plan(`SELECT COUNT(*) FROM "things" WHERE "kind" = 'a' AND "archivedAt" IS NULL`)).toMatch(
      /USING COVERING INDEX ix_things_kind_id_live/,
    );
    const sorted = plan(
      `SELECT * FROM "things" WHERE "archivedAt" IS NULL ORDER BY "_sk_name" DESC, "id" DESC LIMIT 5`,
    );
    expect(sorted).toMatch(/USING INDEX ix_things__sk_name_id_live/);
    expect(sorted).not.toMatch(/TEMP B-TREE/);
    await store.close();
  });

  it('adds what the plan gains and drops what it loses, and says so', async () => {
    const store = SqliteStore.open(':memory:');
    const first = await store.init(conformanceModel);
    expect(first.added).toContain('ix_things_kind_id_live');
    expect(await store.init(conformanceModel)).toEqual({ added: [], dropped: [] });
    // An older version's index per filter is dropped once the plan has another.
    rawDb(store).exec('CREATE INDEX "fx_things_kind" ON "things" ("kind", "id")');
    const fewer = modelFromInputs({
      entityFiles: [
        {
          file: 'things.yaml',
          text: THINGS_ENTITY.replace('filters: [kind, tags, flag, note]', 'filters: [flag]').replace(
            'sortable: [name]',
            '',
          ),
          origin: 'app',
        },
      ],
    });
    const second = await store.init(fewer);
    expect(second.added).toEqual([]);
    expect(second.dropped.sort()).toEqual(
      ['fx_things_kind', 'ix_things__sk_name_id_live', 'ix_things_kind_id_live', 'ix_things_note_id_live'].sort(),
    );
    await store.close();
  });
});
