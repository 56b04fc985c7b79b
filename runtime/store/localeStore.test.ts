import { describe, expect, it } from 'vitest';
import { modelFromInputs } from '../../generator/build.js';
import { newId } from '../write/prepareWrite.js';
import { withLocales } from './localeStore.js';
import { SqliteStore } from './sqlite/sqliteStore.js';
import { UniqueConflict } from './types.js';

const model = modelFromInputs({
  config: { file: 'entigen.config.yaml', text: 'version: 1\nlocales: { default: en, available: [en, de] }\n' },
  entityFiles: [
    {
      file: 'pages.yaml',
      origin: 'app',
      text:
        'version: 1\nname: Page\nplural: pages\nbase: owned\nfields:\n' +
        '  title: { type: string, required: true, unique: true, localized: true }\n' +
        '  rank: { type: int }\nsortable: [title]\n',
    },
  ],
});

const page = (title: unknown) => ({
  id: newId(),
  ownerId: '0'.repeat(24),
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
  archivedAt: null,
  title,
  rank: 1,
});

describe('the locale store', () => {
  it('keeps a column per locale beneath and one object per record above', async () => {
    const raw = SqliteStore.open(':memory:');
    // A store opened without the wrapper (a CLI command) lays the columns out all the same.
    await raw.init(model);
    const store = withLocales(raw, model);
    const made = await store.insert('pages', page({ en: 'Hello', de: 'Hallo' }));
    expect(made.title).toEqual({ en: 'Hello', de: 'Hallo' });
    expect(await raw.get('pages', made.id)).toMatchObject({ title: 'Hello', title__de: 'Hallo' });

    // Some locales: the others stay; null clears one; a plain value is the default locale's.
    expect((await store.update('pages', made.id, { title: { de: 'Servus' } }))?.title).toEqual({
      en: 'Hello',
      de: 'Servus',
    });
    expect((await store.update('pages', made.id, { title: { de: null } }))?.title).toEqual({ en: 'Hello' });
    expect((await store.update('pages', made.id, { title: 'Hi' }))?.title).toEqual({ en: 'Hi' });

    // Conditions and orders name columns; a selected field brings every locale.
    await store.insert('pages', page({ en: 'Zebra', de: 'Affe' }));
    const byGerman = await store.find('pages', {
      where: { field: 'title__de', op: 'exists', value: true },
      sort: [{ field: 'title__de', direction: 'asc' }],
      select: ['title'],
    });
    expect(byGerman.map((p) => p.title)).toEqual([{ en: 'Zebra', de: 'Affe' }]);

    // Unique per locale, named by field and locale.
    await store.insert('pages', page({ en: 'Other', de: 'Hi' }));
    await expect(store.insert('pages', page({ en: 'Zebra' }))).rejects.toMatchObject({ field: 'title.en' });
    await expect(store.insert('pages', page({ en: 'New', de: 'Affe' }))).rejects.toBeInstanceOf(UniqueConflict);
    await raw.close();
  });

  it('is not there at all without localized fields', () => {
    const plain = modelFromInputs({
      entityFiles: [
        { file: 'a.yaml', origin: 'app', text: 'version: 1\nname: A\nplural: as\nfields: { x: { type: string } }\n' },
      ],
    });
    const raw = SqliteStore.open(':memory:');
    expect(withLocales(raw, plain)).toBe(raw);
  });
});
