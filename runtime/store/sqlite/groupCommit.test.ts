import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conformanceModel, newThing } from '../../../test/conformance/storeConformance.js';
import { type Doc, UniqueConflict } from '../types.js';
import type { GroupCommit } from './groupCommit.js';
import { SqliteStore } from './sqliteStore.js';

const thing = (name: string, code?: string) => newThing(name, code ? { code } : {});
const groupOf = (store: SqliteStore) => (store as unknown as { shared: { group: GroupCommit } }).shared.group;
const pause = () => new Promise((resolve) => setTimeout(resolve, 2));
const names = (docs: Doc[]) => docs.map((d) => d.name);

async function open() {
  const path = join(mkdtempSync(join(tmpdir(), 'entigen-group-')), 'g.db');
  const store = SqliteStore.open(path);
  await store.init(conformanceModel);
  return { store, path };
}

describe('group commit', () => {
  it('commits concurrent transactions together, each after its own work, and all are durable', async () => {
    const { store, path } = await open();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.transaction(async (tx) => {
          await pause();
          await tx.insert('things', thing(`t${i}`));
          await tx.insert('happenings', { ...thing(`h${i}`), place: 'x' });
          return i;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const group = groupOf(store);
    expect(group.members).toBe(20);
    expect(group.groups).toBeLessThan(20);
    // Another connection sees every committed row.
    const other = SqliteStore.open(path);
    await other.init(conformanceModel);
    expect(await other.count('things', {})).toBe(20);
    expect(await other.count('happenings', {})).toBe(20);
    await other.close();
    await store.close();
  });

  it('rolls back only the member that failed', async () => {
    const { store } = await open();
    await store.insert('things', thing('taken', 'C-1'));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        store.transaction(async (tx) => {
          await tx.insert('things', thing(`m${i}`));
          await pause();
          if (i === 2) await tx.insert('things', thing('dup', 'C-1'));
          if (i === 4) throw new Error('refused by a hook');
        }),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(UniqueConflict);
    const names = (await store.find('things', { sort: [{ field: 'name', direction: 'asc' }] })).map((d) => d.name);
    expect(names).toEqual(['m0', 'm1', 'm3', 'm5', 'taken']);
    await store.close();
  });

  it('lets readers in between groups while writes keep coming', async () => {
    const { store } = await open();
    let writing = true;
    const writers = Array.from({ length: 4 }, async () => {
      while (writing)
        await store.transaction(async (tx) => {
          await tx.insert('things', thing('w'));
          await pause();
        });
    });
    await pause();
    const read = await Promise.race([
      store.count('things', {}).then((n) => ({ n })),
      new Promise<'starved'>((resolve) => setTimeout(() => resolve('starved'), 2000)),
    ]);
    writing = false;
    await Promise.all(writers);
    expect(read).not.toBe('starved');
    await store.close();
  });

  it('runs a nested transaction inside its member', async () => {
    const { store } = await open();
    await store.transaction(async (tx) => {
      await tx.transaction(async (inner) => {
        await inner.insert('things', thing('nested'));
      });
    });
    expect(await store.count('things', {})).toBe(1);
    await store.close();
  });

  describe('the text index', () => {
    const segments = (store: SqliteStore) =>
      (store as unknown as { shared: { db: { prepare(sql: string): { get(): { n: number } } } } }).shared.db
        .prepare('SELECT count(*) AS n FROM things__fts_data')
        .get().n;

    it('writes a group once, after its members, and finds what each committed', async () => {
      const { store } = await open();
      const before = segments(store);
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.transaction(async (tx) => {
            await tx.insert('things', { ...thing(`quokka ${i}`), note: `marsupial ${i}` });
            await pause();
          }),
        ),
      );
      expect(groupOf(store).groups).toBeLessThan(10);
      expect(await store.count('things', { text: 'quokka' })).toBe(10);
      expect(await store.count('things', { text: 'marsupial' })).toBe(10);
      // One segment per group, not one per member: each of those wrote a few rows of its own.
      expect(segments(store) - before).toBeLessThanOrEqual(groupOf(store).groups);
      await store.close();
    });

    it('leaves out the text of a member that rolled back, and keeps the others', async () => {
      const { store } = await open();
      const outcomes = await Promise.allSettled(
        ['wombat', 'numbat', 'dingo'].map((name) =>
          store.transaction(async (tx) => {
            await tx.insert('things', thing(name));
            await pause();
            if (name === 'numbat') throw new Error('refused by a hook');
          }),
        ),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await store.count('things', { text: 'numbat' })).toBe(0);
      expect(names(await store.find('things', { text: 'wombat' }))).toEqual(['wombat']);
      expect(names(await store.find('things', { text: 'dingo' }))).toEqual(['dingo']);
      await store.close();
    });

    it('lets a member search what it and the members before it wrote, even when it then fails', async () => {
      const { store } = await open();
      const seen: number[] = [];
      const outcomes = await Promise.allSettled(
        ['emu one', 'emu two', 'emu three'].map((name, i) =>
          store.transaction(async (tx) => {
            await tx.insert('things', thing(name));
            seen.push(await tx.count('things', { text: 'emu' }));
            await pause();
            if (i === 1) throw new Error('refused after a search');
          }),
        ),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      // Each member saw its own row and those of the members before it in the group.
      expect(seen).toEqual([1, 2, 2]);
      // The failed member's search ran the first member's text inside its savepoint: rolled back
      // with it, that text is written again at the end of the group.
      expect(names(await store.find('things', { text: 'emu', sort: [{ field: 'name', direction: 'asc' }] }))).toEqual([
        'emu one',
        'emu three',
      ]);
      await store.close();
    });

    it('replaces and removes text queued in the same group, in order', async () => {
      const { store } = await open();
      const kept = thing('koala');
      const gone = thing('possum');
      await Promise.all([
        store.transaction(async (tx) => {
          await tx.insert('things', kept);
          await tx.insert('things', gone);
          await pause();
        }),
        store.transaction(async (tx) => {
          await pause();
          await tx.update('things', kept.id, { name: 'bilby' });
          await tx.remove('things', gone.id);
        }),
      ]);
      expect(await store.count('things', { text: 'koala' })).toBe(0);
      expect(await store.count('things', { text: 'possum' })).toBe(0);
      expect(names(await store.find('things', { text: 'bilby' }))).toEqual(['bilby']);
      await store.close();
    });
  });
});
