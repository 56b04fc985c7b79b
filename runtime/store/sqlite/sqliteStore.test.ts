import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { conformanceModel, newThing as thing } from '../../../test/conformance/storeConformance.js';
import { SqliteStore } from './sqliteStore.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the SQLite store', () => {
  it('reads the data version once per turn, and again after a write through this process', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'entigen-version-')), 'v.db');
    const store = SqliteStore.open(path);
    await store.init(conformanceModel);
    const other = SqliteStore.open(path);
    await other.init(conformanceModel);
    await nextTurn();
    store.changedElsewhere();
    const shared = (store as unknown as { shared: { dataVersionStatement: Database.Statement } }).shared;
    const statement = shared.dataVersionStatement;
    let reads = 0;
    const get = statement.get.bind(statement);
    statement.get = ((...args: unknown[]) => {
      reads++;
      return get(...args);
    }) as typeof statement.get;

    await nextTurn();
    expect([store.changedElsewhere(), store.changedElsewhere(), store.changedElsewhere()]).toEqual([
      false,
      false,
      false,
    ]);
    expect(reads).toBe(1);
    // Another connection of this process writes: seen within the same turn.
    await other.insert('things', thing('a'));
    expect(store.changedElsewhere()).toBe(true);
    expect(store.changedElsewhere()).toBe(false);
    expect(reads).toBe(2);
    await nextTurn();
    expect(store.changedElsewhere()).toBe(false);
    expect(reads).toBe(3);
    await other.close();
    await store.close();
  });
});
