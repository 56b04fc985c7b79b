import { localeColumn } from '../model/locales.js';
import type { AppModel } from '../model/types.js';
import { StoreWrapper } from './storeWrapper.js';
import {
  type Doc,
  type FindQuery,
  type FindResult,
  type IncrementInput,
  type InsertInput,
  type Store,
  UniqueConflict,
  type UpdateSet,
  type Where,
} from './types.js';

/** A localized field's columns, by locale. */
type Columns = ReadonlyArray<readonly [locale: string, column: string]>;

/** Per collection: each localized field's columns. */
type Layout = ReadonlyMap<string, ReadonlyMap<string, Columns>>;

/**
 * The store as the rest of the server sees it when entities have localized fields: a record
 * holds such a field as one object keyed by locale (`{ en: 'Hello', de: 'Hallo' }`), while the
 * store beneath keeps one column per locale (model/locales.ts). A write of some locales sets
 * those columns only, so `{ de: 'Hallo' }` leaves the other locales as they are; `null` clears
 * them all; a plain value (a hook's or a job's) is the default locale's. Conditions and orders
 * name columns: `title` is the default locale's, `title__de` German's.
 */
export class LocaleStore extends StoreWrapper {
  constructor(
    inner: Store,
    private readonly layout: Layout,
  ) {
    super(inner);
  }

  override async find(collection: string, query: FindQuery): Promise<FindResult> {
    const fields = this.layout.get(collection);
    if (!fields) return super.find(collection, query);
    const select = query.select?.flatMap((name) => fields.get(name)?.map(([, column]) => column) ?? [name]);
    const found = await super.find(collection, select ? Object.assign({}, query, { select }) : query);
    return found.map((doc) => fold(doc, fields));
  }
  override async get(collection: string, id: string, where?: Where): Promise<Doc | null> {
    const doc = await super.get(collection, id, where);
    const fields = this.layout.get(collection);
    return doc && fields ? fold(doc, fields) : doc;
  }
  override insert(collection: string, doc: InsertInput): Promise<Doc> {
    const fields = this.layout.get(collection);
    if (!fields) return super.insert(collection, doc);
    return this.named(collection, async () => fold(await super.insert(collection, flatten(doc, fields, true)), fields));
  }
  override insertMany(collection: string, docs: InsertInput[]): Promise<Doc[]> {
    const fields = this.layout.get(collection);
    if (!fields) return super.insertMany(collection, docs);
    return this.named(collection, async () =>
      (
        await super.insertMany(
          collection,
          docs.map((doc) => flatten(doc, fields, true)),
        )
      ).map((doc) => fold(doc, fields)),
    );
  }
  override update(collection: string, id: string, set: UpdateSet, where?: Where): Promise<Doc | null> {
    const fields = this.layout.get(collection);
    if (!fields) return super.update(collection, id, set, where);
    return this.named(collection, async () => {
      const doc = await super.update(collection, id, flatten(set, fields, false), where);
      return doc && fold(doc, fields);
    });
  }
  override increment(
    collection: string,
    id: string,
    by: IncrementInput,
    set?: UpdateSet,
    where?: Where,
  ): Promise<Doc | null> {
    const fields = this.layout.get(collection);
    if (!fields) return super.increment(collection, id, by, set, where);
    return this.named(collection, async () => {
      const doc = await super.increment(collection, id, by, set && flatten(set, fields, false), where);
      return doc && fold(doc, fields);
    });
  }

  /** A unique conflict on a locale's column names the field and the locale (`title.de`). */
  private async named<T>(collection: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof UniqueConflict)) throw error;
      for (const [field, columns] of this.layout.get(collection) ?? []) {
        const hit = columns.find(([, column]) => column === error.field);
        if (hit) throw new UniqueConflict(collection, `${field}.${hit[0]}`);
      }
      throw error;
    }
  }

  protected wrapTransaction(tx: Store): Store {
    return new LocaleStore(tx, this.layout);
  }
}

/** A record or a change as the store keeps it: each localized field spread over its columns. */
function flatten<T extends Record<string, unknown>>(
  values: T,
  fields: ReadonlyMap<string, Columns>,
  whole: boolean,
): T {
  let out: Record<string, unknown> | undefined;
  for (const [field, columns] of fields) {
    if (!(field in values)) continue;
    const value = values[field];
    if (value === undefined) continue;
    out ??= { ...values };
    delete out[field];
    if (value === null || typeof value !== 'object') {
      // Cleared: every locale; a plain value: the default locale's (the first column).
      if (value === null) for (const [, column] of columns) out[column] = null;
      else out[field] = value;
      continue;
    }
    const byLocale = value as Record<string, unknown>;
    for (const [locale, column] of columns) {
      if (byLocale[locale] !== undefined) out[column] = byLocale[locale];
      else if (whole) out[column] = null;
    }
  }
  return (out ?? values) as T;
}

/** A stored record as the server sees it: each localized field one object of the locales that have a value. */
function fold(stored: Doc, fields: ReadonlyMap<string, Columns>): Doc {
  const doc: Doc = { ...stored };
  for (const [field, columns] of fields) {
    let present = false;
    const byLocale: Record<string, unknown> = {};
    for (const [locale, column] of columns) {
      if (!(column in doc)) continue;
      present = true;
      const value = doc[column];
      if (value !== null && value !== undefined) byLocale[locale] = value;
      if (column !== field) delete doc[column];
    }
    if (present) doc[field] = Object.keys(byLocale).length > 0 ? byLocale : null;
  }
  return doc;
}

/** `store` around the model's localized fields, or `store` itself when it has none. */
export function withLocales(store: Store, model: AppModel): Store {
  const locales = model.locales;
  if (!locales) return store;
  const layout = new Map<string, Map<string, Columns>>();
  for (const entity of model.entities) {
    for (const field of entity.fields) {
      if (!field.localized) continue;
      if (!layout.has(entity.plural)) layout.set(entity.plural, new Map());
      layout.get(entity.plural)!.set(
        field.name,
        field.localized.locales.map((locale) => [locale, localeColumn(field.name, locale, locales)] as const),
      );
    }
  }
  return layout.size > 0 ? new LocaleStore(store, layout) : store;
}
