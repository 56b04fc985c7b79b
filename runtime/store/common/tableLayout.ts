import type { EntityModel, FieldModel } from '../../model/types.js';
import { type PlannedIndex, planIndexes } from './indexPlan.js';

export type ColumnKind = 'text' | 'int' | 'real' | 'bool' | 'json';

export interface Column {
  field: string;
  kind: ColumnKind;
  /** Column holding the natural-order key of a string field, when the field is sortable text. */
  sortKey?: string;
  /** Text of any length (string, url, encrypted): an index on it must not hold the value itself. */
  longText?: boolean;
  /** Column holding the folded text (`foldText`) of a filterable string, for contains and startsWith. */
  fold?: string;
}

/** How one entity maps onto a table (a collection, for MongoDB): real columns for scalars, JSON for arrays, objects and `any`. */
export interface TableLayout {
  table: string;
  columns: Map<string, Column>;
  searchFields: string[];
  unique: string[];
  /**
   * Tenant-scoped entities: unique values are unique within a tenant (records without one form a
   * tenant of their own), so a 409 never tells one tenant what another holds.
   */
  uniqueWithin?: 'tenantId';
  /** The indexes the entity's lists need (planIndexes); sync adds what is missing and drops what is not planned. */
  indexes: PlannedIndex[];
  /** Every layout of the store, by collection: what a `through` condition reaches (set by the store's init). */
  siblings?: ReadonlyMap<string, TableLayout>;
}

const TEXT_TYPES = new Set(['string', 'url', 'enum', 'objectId', 'isoDate', 'encryptedKey']);
const SORT_KEY_TYPES = new Set(['string', 'url', 'enum']);
const LONG_TEXT_TYPES = new Set(['string', 'url', 'encryptedKey']);

export function columnKind(field: FieldModel): ColumnKind {
  if (TEXT_TYPES.has(field.type)) return 'text';
  if (field.type === 'int') return 'int';
  if (field.type === 'float') return 'real';
  if (field.type === 'boolean') return 'bool';
  return 'json';
}

export function sortKeyColumn(field: string): string {
  return `_sk_${field}`;
}

export function foldColumn(field: string): string {
  return `_f_${field}`;
}

const FOLD_TYPES = new Set(['string', 'url']);

export function tableLayout(entity: EntityModel): TableLayout {
  const columns = new Map<string, Column>();
  for (const field of entity.fields) {
    columns.set(field.name, {
      field: field.name,
      kind: columnKind(field),
      ...(SORT_KEY_TYPES.has(field.type) && !field.hidden ? { sortKey: sortKeyColumn(field.name) } : {}),
      ...(LONG_TEXT_TYPES.has(field.type) ? { longText: true } : {}),
      ...(FOLD_TYPES.has(field.type) && field.filterable && !field.hidden ? { fold: foldColumn(field.name) } : {}),
    });
  }
  return {
    table: entity.plural,
    columns,
    searchFields: entity.searchFields,
    unique: entity.fields.filter((f) => f.unique && f.name !== 'id').map((f) => f.name),
    ...(entity.tenantScoped && entity.fields.some((f) => f.name === 'tenantId')
      ? { uniqueWithin: 'tenantId' as const }
      : {}),
    indexes: planIndexes(entity, columns),
  };
}
