import { createHash } from 'node:crypto';
import type { EntityModel } from '../../model/types.js';

/** What the plan needs to know of a column (tableLayout's Column). */
interface ColumnShape {
  kind: string;
  sortKey?: string;
  longText?: boolean;
}

/**
 * One index a store keeps for an entity, as the list query uses it: equality columns first,
 * then the order column, then the id (the tie-breaker and cursor order). Lists leave archived
 * records out (`archivedAt IS NULL`): for owned entities the index is partial, over the live
 * records only (`live`), so it is smaller and the order needs no archived column in front,
 * which PostgreSQL would not treat as fixed. `why` says which query it serves.
 */
export interface PlannedIndex {
  name: string;
  /** Column names in order (text sort fields through their natural-order key column). */
  columns: string[];
  /** Only records that are not archived (`WHERE "archivedAt" IS NULL`). */
  live: boolean;
  /** btree (SQLite: every index); gin: JSON arrays (PostgreSQL); hash: long text equality (PostgreSQL). */
  method: 'btree' | 'gin' | 'hash';
  /** The stores that keep it, when not every store does. */
  only?: StoreKind[];
  why: string;
}

type StoreKind = 'sqlite' | 'postgres' | 'mongo';

/** The indexes of the plan a store keeps. */
export function indexesFor(indexes: PlannedIndex[], kind: StoreKind): PlannedIndex[] {
  return indexes.filter((index) => !index.only || index.only.includes(kind));
}

/** Identifier length PostgreSQL keeps (longer names are cut, which would break the comparison on sync). */
const MAX_NAME = 63;
/** Prefix of every planned index; sync drops indexes with it that the plan no longer has. */
export const PLANNED_PREFIX = 'ix_';

export function plannedIndexName(table: string, parts: string[]): string {
  const name = `${PLANNED_PREFIX}${table}_${parts.join('_')}`;
  if (name.length <= MAX_NAME) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.slice(0, MAX_NAME - 11)}_${digest}`;
}

/**
 * The indexes an entity's lists need, from its declarations:
 * - each filter: (filter, id): equality, newest first, and its count;
 * - each `sortable` field: (sort key, id); each `indexes` entry as declared, then id;
 * - ownership and tenancy: (ownerId | tenantId, id) for the own- and tenant-scoped lists;
 * - the default list: (id) over live records, and (createdAt, id) for the date parameters
 *   (`dateFrom`/`dateTo`), which only the generic list routes take: an internal entity has
 *   none, so its writes do not keep that index unless it declares it (`indexes: [[createdAt]]`).
 * Owned entities keep them over live records (`live`). JSON arrays get a GIN index on
 * PostgreSQL, a multikey one on MongoDB, none on SQLite; long text a hash index on PostgreSQL
 * (a btree refuses values over ~2.7 kB), the composite elsewhere. Unique fields have their own
 * unique index.
 */
export function planIndexes(entity: EntityModel, columns: ReadonlyMap<string, ColumnShape>): PlannedIndex[] {
  const table = entity.plural;
  const live = entity.ownership === 'owned' && columns.has('archivedAt');
  const plan = new Map<string, PlannedIndex>();
  const add = (fields: string[], why: string, method: PlannedIndex['method'] = 'btree', only?: StoreKind[]) => {
    const names = [...new Set(fields)];
    const partial = live && method === 'btree';
    const key = `${method}:${partial}:${names.join(',')}`;
    const suffix = [...(method === 'btree' ? [] : [method]), ...(partial ? ['live'] : [])];
    const name = plannedIndexName(table, [...names, ...suffix]);
    if (!plan.has(key)) plan.set(key, { name, columns: names, live: partial, method, ...(only ? { only } : {}), why });
  };
  const sortColumn = (field: string) => columns.get(field)?.sortKey ?? field;

  // Without live records to select, the primary key already serves the id order.
  if (live) add(['id'], 'default list order and its count');
  for (const field of ['ownerId', 'tenantId']) {
    if (columns.has(field)) add([field, 'id'], `lists scoped by ${field}`);
  }
  if (columns.has('createdAt') && !entity.internal) add(['createdAt', 'id'], 'dateFrom/dateTo on createdAt');
  for (const field of entity.filters) {
    const column = columns.get(field);
    if (!column || entity.fields.find((f) => f.name === field)?.unique) continue;
    if (column.kind === 'json') {
      // SQLite cannot index the items of a JSON array: those filters read the rows.
      add([field], `filter ${field} (array items)`, 'gin', ['postgres']);
      add([field], `filter ${field} (array items, multikey)`, 'btree', ['mongo']);
    } else if (column.longText) {
      // A PostgreSQL btree refuses values over ~2.7 kB; a hash index takes any length.
      add([field], `filter ${field} (text of any length)`, 'hash', ['postgres']);
      add([field, 'id'], `filter ${field}`, 'btree', ['sqlite', 'mongo']);
    } else add([field, 'id'], `filter ${field}`);
  }
  for (const field of entity.sortable ?? []) add([sortColumn(field), 'id'], `sort ${field}`);
  for (const fields of entity.indexes ?? []) {
    const order = fields.at(-1)!;
    add(
      [...fields.slice(0, -1), sortColumn(order), 'id'],
      `declared: ${fields.slice(0, -1).join(', ') || '(none)'} then ${order}`,
    );
  }
  return [...plan.values()];
}
