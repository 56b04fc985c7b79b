import { describe, expect, it } from 'vitest';
import type { RuntimeContext } from '../context/runtimeContext.js';
import type { EntityModel } from '../model/types.js';
import { showsLocalized } from './localize.js';

type Field = { name: string; localized?: boolean; ref?: string; items?: { type: string; ref?: string } };

function registry(entities: Record<string, { fields: Field[]; relations?: { entity: string }[] }>) {
  const models = new Map(
    Object.entries(entities).map(([name, entity]) => [
      name,
      { model: { plural: name, ...entity } as unknown as EntityModel },
    ]),
  );
  return {
    ctx: { registry: { entities: models } } as unknown as RuntimeContext,
    model: (name: string) => models.get(name)!.model,
  };
}

describe('showsLocalized', () => {
  it('follows references, reference lists and relations, and ends on cycles', () => {
    const { ctx, model } = registry({
      faqs: { fields: [{ name: 'question', localized: true }] },
      topics: { fields: [{ name: 'faq', ref: 'faqs' }] },
      shelves: { fields: [{ name: 'topics', items: { type: 'objectId', ref: 'topics' } }] },
      sections: { fields: [], relations: [{ entity: 'faqs' }] },
      // articles and authors reference each other and nothing localized.
      articles: { fields: [{ name: 'author', ref: 'authors' }] },
      authors: { fields: [{ name: 'favourite', ref: 'articles' }] },
      // A cycle that does reach a localized field.
      left: { fields: [{ name: 'right', ref: 'right' }] },
      right: {
        fields: [
          { name: 'left', ref: 'left' },
          { name: 'faq', ref: 'faqs' },
        ],
      },
    });
    expect(
      ['faqs', 'topics', 'shelves', 'sections', 'left', 'right'].map((n) => showsLocalized(ctx, model(n))),
    ).toEqual([true, true, true, true, true, true]);
    expect(['articles', 'authors'].map((n) => showsLocalized(ctx, model(n)))).toEqual([false, false]);
  });
});
