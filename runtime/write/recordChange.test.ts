import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { modelFromInputs } from '../../generator/build.js';
import { packageEntityFiles } from '../../generator/readInputs.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { EntityModel } from '../model/types.js';
import { SqliteStore } from '../store/sqlite/sqliteStore.js';
import type { Doc } from '../store/types.js';
import { newId } from './prepareWrite.js';
import { recordChange } from './recordChange.js';

function modelWith(history: string) {
  const text = `version: 1\nname: Note\nplural: notes\nbase: owned\n${history}\nfields:\n  text: { type: string }\n  secret: { type: string, hidden: true }\n`;
  return modelFromInputs({
    entityFiles: [...packageEntityFiles('builtin', 'builtin'), { file: 'notes.yaml', text, origin: 'app' }],
  });
}

async function setup(history: string, now: () => Date = () => new Date()) {
  const model = modelWith(history);
  const store = SqliteStore.open(':memory:');
  await store.init(model);
  const ctx = { store, now, logger: pino({ level: 'silent' }) } as unknown as RuntimeContext;
  return { ctx, store, entity: model.entities.find((e) => e.plural === 'notes') as EntityModel };
}

const note = (text: string, id = newId()): Doc => ({
  id,
  ownerId: 'o',
  text,
  secret: 'hidden!',
  createdAt: 't',
  updatedAt: 't',
  archivedAt: null,
});

describe('recordChange', () => {
  it('keeps only the newest N versions with history.keep', async () => {
    const { ctx, store, entity } = await setup('versioning: full\nhistory: { keep: 2 }');
    const id = newId();
    let before: Doc | undefined;
    for (const text of ['a', 'b', 'c', 'd']) {
      const after = note(text, id);
      await recordChange(
        store,
        ctx,
        entity,
        { changeType: before ? 'update' : 'create', before, after },
        { changedBy: 'u' },
      );
      before = after;
    }
    const versions = await store.find('entityVersions', { sort: [{ field: 'version', direction: 'asc' }] });
    expect(versions.map((v) => v.version)).toEqual([3, 4]);
    expect(JSON.stringify(versions)).not.toContain('hidden!');
  });

  it('keeps the newest versions by number, whatever order their ids have across instances', async () => {
    const { ctx, store, entity } = await setup('versioning: full\nhistory: { keep: 2 }');
    const id = newId();
    const first = note('a', id);
    // Version 1 as another server wrote it in the same second: an id above the ones made here.
    await store.insert('entityVersions', {
      id: `${newId().slice(0, 8)}ffffffffffffffff`,
      entity: 'notes',
      entityId: id,
      version: 1,
      versionKey: `notes:${id}:1`,
      snapshot: first,
      changedBy: 'u',
      changeType: 'create',
      changedFields: [],
      createdAt: 't',
      updatedAt: 't',
    });
    let before: Doc = first;
    for (const text of ['b', 'c']) {
      const after = note(text, id);
      await recordChange(store, ctx, entity, { changeType: 'update', before, after }, { changedBy: 'u' });
      before = after;
    }
    const versions = await store.find('entityVersions', { sort: [{ field: 'version', direction: 'asc' }] });
    expect(versions.map((v) => v.version)).toEqual([2, 3]);
  });

  it('drops entries older than history.maxAge but never the latest', async () => {
    let clock = Date.UTC(2030, 0, 1);
    const { ctx, store, entity } = await setup('versioning: simple\nhistory: { maxAge: 1h }', () => new Date(clock));
    const id = newId();
    await recordChange(store, ctx, entity, { changeType: 'create', after: note('a', id) }, { changedBy: 'u' });
    clock += 2 * 3_600_000;
    await recordChange(
      store,
      ctx,
      entity,
      { changeType: 'update', before: note('a', id), after: note('b', id) },
      { changedBy: 'u' },
    );
    const entries = await store.find('auditLogs', {});
    expect(entries.map((e) => e.changeType)).toEqual(['update']);
    clock += 5 * 3_600_000;
    await recordChange(
      store,
      ctx,
      entity,
      { changeType: 'archive', before: note('b', id), after: note('b', id) },
      { changedBy: 'u' },
    );
    expect((await store.find('auditLogs', {})).map((e) => e.changeType)).toEqual(['archive']);
  });

  it('starts history with the next change after the mode is switched on', async () => {
    const { ctx, store, entity } = await setup('versioning: full');
    const id = newId();
    // The record existed before versioning: its first recorded change is an update, version 1.
    await recordChange(
      store,
      ctx,
      entity,
      { changeType: 'update', before: note('old', id), after: note('new', id) },
      { changedBy: 'u' },
    );
    const [version] = await store.find('entityVersions', {});
    expect(version).toMatchObject({ version: 1, changeType: 'update', changedFields: ['text'] });
  });
});
