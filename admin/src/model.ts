// The entity metadata and records the console reads (their shapes: apiTypes.ts), and how it titles them.
import type { EntityMetadata, FieldMetadata } from './apiTypes.js';

export type { Me } from './apiTypes.js';

export type FieldMeta = FieldMetadata;
/** An entity as GET /schema/metadata lists it: always with its fields. */
export type EntityMeta = EntityMetadata & { fields: FieldMeta[] };
export type EnumValue = NonNullable<FieldMeta['values']>[number];

/** A record's id as the server makes them: 24 lowercase hex digits. */
export function isRecordId(text: string): boolean {
  return /^[0-9a-f]{24}$/.test(text);
}

export type RecordDoc = Record<string, unknown> & { id: string; archivedAt?: string | null; trashedAt?: string | null };

export interface ListPage {
  items: RecordDoc[];
  totalCount?: number;
  totalPages?: number;
  nextCursor?: string;
}

/**
 * The entities as the signed-in user may use them: a field under access rules they may see on no
 * record is left out (no column, no form field, no filter), one they may set on no record is
 * shown read-only. The server enforces the same rules; this only keeps the console from offering
 * what it would refuse.
 */
export function asCallerMay(entities: EntityMeta[]): EntityMeta[] {
  return entities.map((entity) => ({
    ...entity,
    fields: entity.fields
      .filter((field) => field.access?.caller?.view !== 'none')
      .map((field) => (field.access?.caller?.edit === 'none' ? { ...field, readOnly: true } : field)),
  }));
}

/**
 * The entity as the caller may see and set it on one record (none: a new record, which the caller
 * will own). A field they see only on their own records (`owner` in its `view`) is left out of
 * others' records, where the server sends no key; one they set only on their own is read-only there.
 */
export function onRecord(entity: EntityMeta, record: RecordDoc | undefined, userId: string | undefined): EntityMeta {
  const own = record === undefined || (userId !== undefined && record.ownerId === userId);
  if (own || !entity.fields.some((field) => field.access)) return entity;
  return {
    ...entity,
    fields: entity.fields
      .filter((field) => field.access?.caller?.view !== 'own' || field.name in record)
      .map((field) => (field.access?.caller?.edit === 'own' ? { ...field, readOnly: true } : field)),
  };
}

/** The accounts' plural: what a reference to a user names (`ref: users`). */
export const USERS = 'users';

/** An account as references show it: its display name, else its email. */
export function userLabel(user: { displayName?: string | null; email: string }): string {
  return user.displayName?.trim() ? user.displayName : user.email;
}

/**
 * The field a record is known by in lists, pickers, titles and references: the entity's
 * displayField (declared, or chosen by the server), when the caller may see it.
 */
export function titleField(entity: EntityMeta): FieldMeta | undefined {
  return entity.fields.find((f) => f.name === entity.displayField);
}

/** The longest label a reference or title shows; a longer one (a comment's body) is cut with an ellipsis. */
const LABEL_LENGTH = 80;

/** A label as references show it: on one line, at most LABEL_LENGTH characters. */
export function shortLabel(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > LABEL_LENGTH ? `${line.slice(0, LABEL_LENGTH - 1).trimEnd()}…` : line;
}

export function recordTitle(entity: EntityMeta, record: RecordDoc): string {
  const field = titleField(entity);
  const value = field ? record[field.name] : undefined;
  return typeof value === 'string' && value.trim() ? shortLabel(value) : record.id;
}

/** Base fields the server sets: shown, never edited. */
export function editableFields(entity: EntityMeta): FieldMeta[] {
  return entity.fields.filter((f) => !f.readOnly);
}
