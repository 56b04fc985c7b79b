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

  it("find a record's text entry by id when it is replaced or removed, without reading every entry", async () => {
    const store = SqliteStore.open(':memory:');
    const first = await store.init(conformanceModel);
    expect(first.added).toContain('things__fts_content_id');
    const db = rawDb(store);
    // A database made before the index: the next start adds it.
    db.exec('DROP INDEX "things__fts_content_id"');
    expect((await store.init(conformanceModel)).added).toEqual(['things__fts_content_id']);
    const detail = (
      db
        .prepare(
          'EXPLAIN QUERY PLAN DELETE FROM "things__fts" WHERE rowid IN (SELECT id FROM "things__fts_content" WHERE c0 = ?)',
        )
        .all('x') as { detail: string }[]
    )
      .map((r) => r.detail)
      .join(' | ');
    expect(detail).toMatch(/USING COVERING INDEX things__fts_content_id/);
    const at = '2024-01-01T00:00:00.000Z';
    const base = { ownerId: 'o', createdAt: at, updatedAt: at };
    await store.insertMany('things', [
      { id: 'a1', name: 'wallaby', ...base },
      { id: 'a2', name: 'kangaroo', ...base },
      { id: 'a3', name: 'wallaroo', ...base },
    ]);
    await store.update('things', 'a1', { name: 'pademelon' });
    await store.remove('things', 'a3');
    const found = async (text: string) => (await store.find('things', { text })).map((d) => d.id).sort();
    expect(await found('wallaby')).toEqual([]);
    expect(await found('pademelon')).toEqual(['a1']);
    expect(await found('wallaroo')).toEqual([]);
    expect(await found('kangaroo')).toEqual(['a2']);
    // Exactly one entry per record is left, and FTS5 finds its index consistent.
    expect(db.prepare('SELECT count(*) AS n FROM "things__fts"').get()).toEqual({ n: 2 });
    db.prepare(`INSERT INTO "things__fts"("things__fts") VALUES ('integrity-check')`).run();
    await store.close();
  });

  it('merge the text index eight segments at a time, in a new table and in one made before', async () => {
    const store = SqliteStore.open(':memory:');
    await store.init(conformanceModel);
    const db = rawDb(store);
    const automerge = () =>
      (db.prepare(`SELECT v FROM "things__fts_config" WHERE k = 'automerge'`).get() as { v: number } | undefined)?.v;
    expect(automerge()).toBe(8);
    // A database made before, or set by hand: the next start sets it again.
    db.exec(`INSERT INTO "things__fts" ("things__fts", rank) VALUES ('automerge', 4)`);
    expect(automerge()).toBe(4);
    await store.init(conformanceModel);
    expect(automerge()).toBe(8);
    const at = '2024-01-01T00:00:00.000Z';
    const base = { ownerId: 'o', createdAt: at, updatedAt: at };
    // Many small commits: each writes a segment, and the merges keep the index consistent.
    for (let i = 0; i < 40; i++) await store.insert('things', { id: `m${i}`, name: `wombat${i} echidna`, ...base });
    expect((await store.find('things', { text: 'echidna', limit: 100 })).length).toBe(40);
    expect((await store.find('things', { text: 'wombat17' })).map((d) => d.id)).toEqual(['m17']);
    db.prepare(`INSERT INTO "things__fts"("things__fts") VALUES ('integrity-check')`).run();
    await store.close();
  });

  it('keep no token counts in a new text index, and one made with them goes on working', async () => {
    const store = SqliteStore.open(':memory:');
    await store.init(conformanceModel);
    const db = rawDb(store);
    const tableExists = (name: string) =>
      db.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(name) !== undefined;
    expect(tableExists('things__fts')).toBe(true);
    expect(tableExists('things__fts_docsize')).toBe(false);
    // A database made before: its text index keeps a table of token counts.
    const columns = (db.prepare('PRAGMA table_info("things__fts")').all() as { name: string }[]).map((c) => c.name);
    db.exec('DROP TABLE "things__fts"');
    db.exec(
      `CREATE VIRTUAL TABLE "things__fts" USING fts5(${columns.map((c, i) => (i === 0 ? `${c} UNINDEXED` : c)).join(', ')}, ` +
        `tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3')`,
    );
    expect(tableExists('things__fts_docsize')).toBe(true);
    await store.init(conformanceModel);
    expect(tableExists('things__fts_docsize')).toBe(true);
    const at = '2024-01-01T00:00:00.000Z';
    const base = { ownerId: 'o', createdAt: at, updatedAt: at };
    await store.insertMany('things', [
      { id: 'b1', name: 'quokka', ...base },
      { id: 'b2', name: 'numbat', ...base },
    ]);
    await store.update('things', 'b1', { name: 'bilby' });
    await store.remove('things', 'b2');
    const found = async (text: string) => (await store.find('things', { text })).map((d) => d.id);
    expect(await found('bil')).toEqual(['b1']);
    expect(await found('quokka')).toEqual([]);
    expect(await found('numbat')).toEqual([]);
    db.prepare(`INSERT INTO "things__fts"("things__fts") VALUES ('integrity-check')`).run();
    await store.close();
  });
});
