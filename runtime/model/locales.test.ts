import { describe, expect, it } from 'vitest';
import { acceptedLocale, fallbackChain, localeColumn, physicalModel, pickLocale } from './locales.js';
import type { AppModel, FieldModel, LocalesModel } from './types.js';

const locales: LocalesModel = {
  default: 'en',
  available: ['en', 'de', 'fr', 'pt-BR'],
  fallback: { fr: ['de'], de: ['fr'], 'pt-BR': ['fr'] },
};

describe('locales', () => {
  it('follows fallbacks once each and always ends with the default', () => {
    expect(fallbackChain(locales, 'fr')).toEqual(['fr', 'de', 'en']);
    expect(fallbackChain(locales, 'pt-BR')).toEqual(['pt-BR', 'fr', 'de', 'en']);
    expect(fallbackChain(locales, 'en')).toEqual(['en']);
  });

  it('picks the first locale of the chain with a value, null and missing alike skipped', () => {
    expect(pickLocale({ en: 'Hi', de: null }, ['de', 'en'])).toEqual({ locale: 'en', value: 'Hi' });
    expect(pickLocale({ de: 0 }, ['de', 'en'])).toEqual({ locale: 'de', value: 0 });
    expect(pickLocale(null, ['en'])).toBeUndefined();
  });

  it('takes the most preferred available locale of Accept-Language, by weight then order', () => {
    const available = locales.available;
    expect(acceptedLocale('de-CH, en;q=0.8', available)).toBe('de');
    expect(acceptedLocale('it, fr;q=0.3, en;q=0.4', available)).toBe('en');
    expect(acceptedLocale('pt-br', available)).toBe('pt-BR');
    expect(acceptedLocale('pt', available)).toBe('pt-BR');
    expect(acceptedLocale('*;q=0, it', available)).toBeUndefined();
    expect(acceptedLocale('fr;q=abc, de;q=0.1', available)).toBe('de');
    expect(acceptedLocale(undefined, available)).toBeUndefined();
  });

  it('keeps the default locale in the field own column and every other one beside it', () => {
    expect(localeColumn('title', 'en', locales)).toBe('title');
    expect(localeColumn('title', 'pt-BR', locales)).toBe('title__pt_BR');
    const field: FieldModel = {
      name: 'title',
      label: 'Title',
      type: 'string',
      required: true,
      unique: true,
      search: true,
      trackChanges: false,
      hidden: false,
      readOnly: false,
      system: false,
      filterable: true,
      localized: { locales: ['en', 'de'], defaultLocale: 'en', required: ['en'] },
    };
    const model = {
      version: 1,
      app: { name: 'x' },
      features: [],
      locales: { default: 'en', available: ['en', 'de'], fallback: {} },
      entities: [{ plural: 'pages', fields: [field], filters: ['title'], searchFields: ['title'], sortable: [] }],
    } as unknown as AppModel;
    const [pages] = physicalModel(model).entities;
    expect(pages.fields.map((f) => [f.name, f.unique, f.required, f.localized])).toEqual([
      ['title', true, false, undefined],
      ['title__de', true, false, undefined],
    ]);
    expect(pages.searchFields).toEqual(['title', 'title__de']);
    expect(pages.filters).toEqual(['title', 'title__de']);
  });
});
