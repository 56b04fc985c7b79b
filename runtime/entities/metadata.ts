import { type FieldAbilities, fieldAbilities } from '../access/fieldAccess.js';
import type { Caller } from '../context/caller.js';
import { CONTENT_STATUS_MOVES } from '../model/contentStatus.js';
import { operatorsFor } from '../model/filterOperators.js';
import type { AppModel, EntityModel, FieldModel } from '../model/types.js';

/**
 * FieldMeta of DESIGN.md: what a client needs to render and validate a field. A field under
 * `access:` tells its rule and, for the caller asking (`abilities`), where they may see and set
 * it; one they may not see on every record is not filterable for them.
 */
export function fieldMetadata(field: FieldModel, abilities?: FieldAbilities): Record<string, unknown> {
  const filterable = field.filterable && (abilities === undefined || abilities.view === 'all');
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
    filterable,
    readOnly: field.readOnly || field.system,
    // A filter: the operators it takes as field[op]=value.
    ...(filterable ? { operators: operatorsFor(field) } : {}),
    // An object with declared properties: each as a field of its own, so a form can nest them.
    ...(field.type === 'object' && field.properties
      ? { properties: field.properties.filter((p) => !p.hidden).map((property) => fieldMetadata(property)) }
      : {}),
    ...constraintsOf(field),
    ...(field.localized ? { localized: field.localized } : {}),
    ...(field.access
      ? { access: { view: field.access.view, edit: field.access.edit, ...(abilities ? { caller: abilities } : {}) } }
      : {}),
  };
}

/** The shown fields of an entity as `caller` may use them. */
function fieldsFor(entity: EntityModel, caller: Caller | undefined): Record<string, unknown>[] {
  return visibleFields(entity).map((field) =>
    fieldMetadata(field, field.access && caller ? fieldAbilities(entity, caller, field) : undefined),
  );
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
    // The field a record is known by where it is referenced (a client's label and picker).
    displayField: entity.displayField ?? null,
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
    // Custom endpoints: a client offers them as actions, with their declared body as a form.
    endpoints: (entity.endpoints ?? []).map((e) => ({
      name: e.name,
      method: e.method,
      path: e.path,
      action: e.action,
      description: e.description ?? null,
      body: e.body ? e.body.filter((f) => !f.hidden).map((field) => fieldMetadata(field)) : null,
      response: e.response,
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
export function fieldsMetadata(entity: EntityModel, caller?: Caller) {
  return { fields: fieldsFor(entity, caller) };
}

/** GET /schema/metadata: every entity with its metadata and fields. */
export function schemaMetadata(model: AppModel, caller?: Caller) {
  return {
    entities: publicEntities(model).map((e) => ({ ...entityMetadata(e), fields: fieldsFor(e, caller) })),
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

export function entityWithFields(entity: EntityModel, caller?: Caller) {
  return { ...entityMetadata(entity), fields: fieldsFor(entity, caller) };
}
