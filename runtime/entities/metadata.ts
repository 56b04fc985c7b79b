import { CONTENT_STATUS_MOVES } from '../model/contentStatus.js';
import { operatorsFor } from '../model/filterOperators.js';
import type { AppModel, EntityModel, FieldModel } from '../model/types.js';

/** FieldMeta of DESIGN.md: what a client needs to render and validate a field. */
export function fieldMetadata(field: FieldModel): Record<string, unknown> {
  return {
    name: field.name,
    label: field.label,
    type: field.type,
    required: field.required,
    unique: field.unique,
    default: field.default ?? null,
    values: field.values ?? (field.items?.values ? field.items.values : null),
    ref: field.ref ?? field.items?.ref ?? null,
    items: field.items ? { type: field.items.type } : null,
    search: field.search,
    trackChanges: field.trackChanges,
    filterable: field.filterable,
    readOnly: field.readOnly || field.system,
    // A filter: the operators it takes as field[op]=value.
    ...(field.filterable ? { operators: operatorsFor(field) } : {}),
    // An object with declared properties: each as a field of its own, so a form can nest them.
    ...(field.type === 'object' && field.properties
      ? { properties: field.properties.filter((p) => !p.hidden).map(fieldMetadata) }
      : {}),
    ...constraintsOf(field),
    ...(field.localized ? { localized: field.localized } : {}),
  };
}

const CONSTRAINT_KEYS = ['min', 'max', 'minLength', 'maxLength', 'pattern', 'format', 'minItems', 'maxItems'] as const;

/** `{ constraints }` when the field (or its array's items) declares any; else nothing. */
function constraintsOf(field: FieldModel): { constraints?: Record<string, unknown> } {
  const pick = (value: FieldModel | NonNullable<FieldModel['items']>): Record<string, unknown> =>
    Object.fromEntries(CONSTRAINT_KEYS.filter((key) => value[key] !== undefined).map((key) => [key, value[key]]));
  const own = pick(field);
  const items = field.items ? pick(field.items) : {};
  if (Object.keys(items).length > 0) own.items = items;
  return Object.keys(own).length > 0 ? { constraints: own } : {};
}

function visibleFields(entity: EntityModel): FieldModel[] {
  return entity.fields.filter((f) => !f.hidden);
}

/** GET /{plural}/metadata */
export function entityMetadata(entity: EntityModel) {
  return {
    name: entity.name,
    plural: entity.plural,
    label: entity.label,
    description: entity.description ?? null,
    base: entity.base,
    ownership: entity.ownership,
    versioning: entity.versioning,
    tenantScoped: entity.tenantScoped,
    filters: entity.filters,
    searchFields: entity.searchFields,
    origin: entity.origin,
    sortable: entity.sortable,
    // Content base: the status moves an update may make, so a client offers only those.
    ...(entity.base === 'content' ? { statusTransitions: CONTENT_STATUS_MOVES } : {}),
    // Deleted records wait in a trash this long: ?trash=only, restore-from-trash, ?permanent=true.
    ...(entity.trash ? { trash: { retention: entity.trash.retention } } : {}),
    // Reverse relations: populate=<name>, GET /{plural}/{id}/<name>.
    relations: (entity.relations ?? []).map((r) => ({
      name: r.name,
      label: r.label,
      entity: r.entity,
      field: r.field,
      description: r.description ?? null,
    })),
  };
}

/** GET /{plural}/metadata/type: the base and ownership, with the field names the base adds. */
export function typeMetadata(entity: EntityModel) {
  return {
    base: entity.base,
    ownership: entity.ownership,
    baseFields: entity.fields.filter((f) => f.system || isContentField(entity, f)).map((f) => f.name),
  };
}

const CONTENT_FIELDS = ['title', 'slug', 'summary', 'tags', 'status', 'publishedAt', 'featuredImage'];
function isContentField(entity: EntityModel, field: FieldModel): boolean {
  return entity.base === 'content' && CONTENT_FIELDS.includes(field.name);
}

/** GET /{plural}/metadata/fields */
export function fieldsMetadata(entity: EntityModel) {
  return { fields: visibleFields(entity).map(fieldMetadata) };
}

/** GET /schema/metadata: every entity with its metadata and fields. */
export function schemaMetadata(model: AppModel) {
  return {
    entities: publicEntities(model).map((e) => ({ ...entityMetadata(e), fields: visibleFields(e).map(fieldMetadata) })),
  };
}

/** GET /schema/metadata/list */
export function schemaList(model: AppModel) {
  return {
    items: publicEntities(model).map((e) => ({ name: e.name, plural: e.plural, label: e.label, origin: e.origin })),
  };
}

export function publicEntities(model: AppModel): EntityModel[] {
  return model.entities.filter((e) => !e.internal);
}

/** /schema/metadata/{entity}: by plural or name. */
export function findPublicEntity(model: AppModel, key: string): EntityModel | undefined {
  return publicEntities(model).find((e) => e.plural === key || e.name === key);
}

export function entityWithFields(entity: EntityModel) {
  return { ...entityMetadata(entity), fields: visibleFields(entity).map(fieldMetadata) };
}
