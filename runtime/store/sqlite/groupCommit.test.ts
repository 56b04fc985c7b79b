import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conformanceModel, newThing } from '../../../test/conformance/storeConformance.js';
import { type Doc, UniqueConflict } from '../types.js';
import { type GroupCommit, MAX_KEPT_WRITES } from './groupCommit.js';
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

  it('keeps the writes of the members before a failure once each, and none of the failed one', async () => {
    const { store } = await open();
    const a = await store.insert('things', thing('a'));
    const b = await store.insert('things', thing('b'));
    const outcomes = await Promise.allSettled([
      store.transaction(async (tx) => {
        await tx.insert('things', thing('x0'));
        await tx.update('things', a.id, { name: 'a renamed' });
        await tx.increment('things', a.id, { n: 5 });
        await pause();
      }),
      store.transaction(async (tx) => {
        await tx.remove('things', b.id);
        await tx.insert('things', thing('x1'));
        await pause();
      }),
      store.transaction(async (tx) => {
        await tx.insert('things', thing('x2'));
        await tx.increment('things', a.id, { n: 100 });
        await pause();
        throw new Error('refused by a hook');
      }),
      store.transaction(async (tx) => {
        await tx.insert('things', thing('x3'));
        await tx.increment('things', a.id, { n: 1 });
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // All four shared one commit: the failure undid its own member only.
    expect(groupOf(store).groups).toBe(1);
    const all = await store.find('things', { sort: [{ field: 'name', direction: 'asc' }] });
    expect(names(all)).toEqual(['a renamed', 'x0', 'x1', 'x3']);
    // Replayed once, not twice: 5 from the first member, 1 from the last.
    expect(all[0].n).toBe(6);
    await store.close();
  });

  it('undoes each of several failures in one group alone', async () => {
    const { store } = await open();
    await store.insert('things', thing('taken', 'C-1'));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        store.transaction(async (tx) => {
          await tx.insert('things', thing(`m${i}`));
          await pause();
          if (i === 1 || i === 5) await tx.insert('things', thing(`dup${i}`, 'C-1'));
          if (i === 3 || i === 6) throw new Error('refused by a hook');
        }),
      ),
    );
    expect(outcomes.map((o) => o.status === 'fulfilled')).toEqual([true, false, true, false, true, false, false, true]);
    expect(groupOf(store).groups).toBe(1);
    const kept = names(await store.find('things', { sort: [{ field: 'name', direction: 'asc' }] }));
    expect(kept).toEqual(['m0', 'm2', 'm4', 'm7', 'taken']);
    await store.close();
  });

  it('ends the group after a member that wrote more than it keeps, and still undoes only a failed one', async () => {
    const { store } = await open();
    const many = (prefix: string) => Array.from({ length: MAX_KEPT_WRITES + 10 }, (_, i) => thing(`${prefix}${i}`));
    const bulk = await Promise.allSettled([
      store.transaction(async (tx) => {
        await tx.insert('things', thing('before'));
        await pause();
      }),
      store.transaction(async (tx) => {
        for (const doc of many('bulk ')) await tx.insert('things', doc);
      }),
      store.transaction(async (tx) => {
        await tx.insert('things', thing('after'));
      }),
    ]);
    expect(bulk.every((o) => o.status === 'fulfilled')).toBe(true);
    // Not all of the bulk member's writes were kept: the last member could not join its group.
    expect(groupOf(store).groups).toBe(2);
    expect(await store.count('things', {})).toBe(MAX_KEPT_WRITES + 12);

    const failed = await Promise.allSettled([
      store.transaction(async (tx) => {
        await tx.insert('things', thing('first'));
        await pause();
      }),
      store.transaction(async (tx) => {
        for (const doc of many('failed ')) await tx.insert('things', doc);
        throw new Error('refused by a hook');
      }),
      store.transaction(async (tx) => {
        await tx.insert('things', thing('last'));
      }),
    ]);
    expect(failed.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const named = (name: string) => store.count('things', { where: { field: 'name', op: 'eq', value: name } });
    expect([
      await named('first'),
      await named('failed 0'),
      await named(`failed ${MAX_KEPT_WRITES}`),
      await named('last'),
    ]).toEqual([1, 0, 0, 1]);
    expect(groupOf(store).groups).toBe(3);
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
