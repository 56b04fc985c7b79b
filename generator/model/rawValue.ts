import type { FieldType, ValueConstraints } from '../../runtime/model/types.js';

/** A field (or array item, or object property) of an entity file as the JSON Schema admits it. */
export interface RawValue extends ValueConstraints {
  type: FieldType;
  values?: (string | { key: string; label?: string })[];
  ref?: string;
  items?: RawValue;
  properties?: Record<string, RawField>;
}
export interface RawField extends RawValue {
  label?: string;
  description?: string;
  required?: boolean;
  optional?: boolean;
  unique?: boolean;
  default?: unknown;
  search?: boolean;
  trackChanges?: boolean;
  localized?: boolean | { required?: 'all' | string[] };
  hidden?: boolean;
  /** Who may see and set the field: roles, and `owner`. */
  access?: { view?: string[]; edit?: string[] };
  readOnly?: boolean;
  /** For references: what deleting the referenced record does to this one. */
  onDelete?: 'restrict' | 'setNull' | 'cascade';
}
