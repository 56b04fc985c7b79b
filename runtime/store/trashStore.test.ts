import { describe, expect, it } from 'vitest';
import { modelFromInputs } from '../../generator/build.js';
import { newId } from '../write/prepareWrite.js';
import { SqliteStore } from './sqlite/sqliteStore.js';
import { seeingTrash, TRASHED, TrashStore, withTrash } from './trashStore.js';

const model = modelFromInputs({
  entityFiles: [
    {
      file: 'notes.yaml',
      origin: 'app',
      text: 'version: 1\nname: Note\nplural: notes\nbase: owned\ntrash: true\nfields:\n  title: { type: string }\n  n: { type: int }\n',
    },
    {
      file: 'memos.yaml',
      origin: 'app',
      text: 'version: 1\nname: Memo\nplural: memos\nbase: owned\nfields:\n  title: { type: string }\n',
    },
  ],
});

const record = (title: string, trashedAt: string | null = null) => ({
  id: newId(),
  ownerId: '0'.repeat(24),
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
  archivedAt: null,
  title,
  n: 1,
  trashedAt,
});

async function open() {
  const inner = SqliteStore.open(':memory:');
  await inner.init(model);
  const store = withTrash(inner, model);
  const live = await store.insert('notes', record('live'));
  const binned = await store.insert('notes', record('binned', '2024-02-01T00:00:00.000Z'));
  return { inner, store, live, binned };
}

describe('trash store', () => {
  it('wraps only models with a trash entity', async () => {
    const plain = SqliteStore.open(':memory:');
    const memosOnly = { ...model, entities: model.entities.filter((e) => e.plural !== 'notes') };
    expect(withTrash(plain, memosOnly)).toBe(plain);
    expect(withTrash(plain, model)).toBeInstanceOf(TrashStore);
    await plain.close();
  });

  it('hides trashed records from every read and conditional write', async () => {
    const { store, live, binned } = await open();
    expect(await store.get('notes', binned.id)).toBeNull();
    expect(await store.get('notes', live.id)).toMatchObject({ title: 'live' });
    expect((await store.find('notes', {})).map((d) => d.id)).toEqual([live.id]);
    expect(await store.count('notes', {})).toBe(1);
    // A caller's own condition on trashedAt cannot reach the trash either.
    expect(await store.count('notes', { where: TRASHED })).toBe(0);
    const groups = await store.aggregate('notes', {
      groupBy: [],
      timeZone: 'UTC',
      measures: [{ op: 'sum', field: 'n' }],
      sort: [],
      limit: 10,
      skip: 0,
    });
    expect(groups.groups[0]?.count).toBe(1);
    expect(await store.update('notes', binned.id, { title: 'changed' })).toBeNull();
    expect(await store.increment('notes', binned.id, { n: 1 })).toBeNull();
    expect(await store.remove('notes', binned.id)).toBe(false);
    await store.close();
  });

  it('shows both through seeingTrash, inside transactions too, and leaves other entities alone', async () => {
    const { inner, store, live, binned } = await open();
    const seeing = seeingTrash(store);
    expect(await seeing.count('notes', {})).toBe(2);
    expect(await seeing.get('notes', binned.id)).toMatchObject({ title: 'binned' });
    await store.transaction(async (tx) => {
      expect(await tx.get('notes', binned.id)).toBeNull();
      const inside = seeingTrash(tx);
      expect(await inside.update('notes', binned.id, { title: 'seen' })).toMatchObject({ title: 'seen' });
    });
    expect(await inner.get('notes', binned.id)).toMatchObject({ title: 'seen' });
    expect(seeingTrash(inner)).toBe(inner);
    const memo = await store.insert('memos', { ...record('memo'), trashedAt: undefined });
    expect(await store.get('memos', memo.id)).toMatchObject({ title: 'memo' });
    expect(await store.get('notes', live.id)).not.toBeNull();
    await store.close();
  });
});
