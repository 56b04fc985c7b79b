// The shapes of the API answers the console reads (see the documentation's concepts pages and openapi.json).

export interface EnumValue {
  key: string;
  label: string;
}

export interface FieldMeta {
  name: string;
  label: string;
  type: string;
  required: boolean;
  unique: boolean;
  default: unknown;
  values: EnumValue[] | null;
  ref: string | null;
  items: { type: string } | null;
  search: boolean;
  trackChanges: boolean;
  filterable: boolean;
  readOnly: boolean;
  /** Objects with declared properties: each as a field. */
  properties?: FieldMeta[];
  /** Filters: the comparison operators the list takes as `field[op]=value`. */
  operators?: string[];
  constraints?: Record<string, unknown>;
}

export interface EntityMeta {
  name: string;
  plural: string;
  label: string;
  description: string | null;
  base: string;
  ownership: string;
  versioning: string;
  tenantScoped: boolean;
  filters: string[];
  searchFields: string[];
  origin: string;
  sortable: string[];
  /** Content base: the status moves an update may make. */
  statusTransitions?: Record<string, string[]>;
  relations: { name: string; label: string; entity: string; field: string }[];
  fields: FieldMeta[];
}

export interface Me {
  user: { id: string; email: string; displayName: string; mfaEnabled?: boolean };
  roles: string[];
  permissions: string[];
  mfaEnrollmentRequired?: boolean;
  /** With tenancy: the tenants the user is a member of. */
  tenants?: { id: string; label: string | null }[];
}

export type RecordDoc = Record<string, unknown> & { id: string; archivedAt?: string | null };

export interface ListPage {
  items: RecordDoc[];
  totalCount?: number;
  totalPages?: number;
  nextCursor?: string;
}

/** The field a record is known by in lists, pickers and titles. */
export function titleField(entity: EntityMeta): FieldMeta | undefined {
  const byName = ['title', 'name', 'displayName', 'label', 'email', 'key', 'sku'];
  for (const name of byName) {
    const field = entity.fields.find((f) => f.name === name && f.type === 'string');
    if (field) return field;
  }
  return entity.fields.find((f) => f.type === 'string' && !f.readOnly);
}

export function recordTitle(entity: EntityMeta, record: RecordDoc): string {
  const field = titleField(entity);
  const value = field ? record[field.name] : undefined;
  return typeof value === 'string' && value.trim() ? value : record.id;
}

/** Base fields the server sets: shown, never edited. */
export function editableFields(entity: EntityMeta): FieldMeta[] {
  return entity.fields.filter((f) => !f.readOnly);
}
