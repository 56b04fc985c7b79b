// The normalized application model: written by `entigen build` as generated/metadata.json,
// read by the runtime. The generator's emitters take nothing else as input.

export const FIELD_TYPES = [
  'string',
  'int',
  'float',
  'boolean',
  'enum',
  'objectId',
  'isoDate',
  'array',
  'object',
  'url',
  'any',
  'encryptedKey',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const BASES = ['content', 'owned', 'system'] as const;
export type Base = (typeof BASES)[number];

export const OWNERSHIPS = ['owned', 'system'] as const;
export type Ownership = (typeof OWNERSHIPS)[number];

export const VERSIONING_MODES = ['none', 'simple', 'full'] as const;
export type Versioning = (typeof VERSIONING_MODES)[number];

export const ACTIONS = ['view', 'create', 'edit', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];

export const FEATURES = ['grants', 'content', 'datasets', 'searchFeedback', 'search'] as const;
export type Feature = (typeof FEATURES)[number];

export interface EnumValue {
  key: string;
  label: string;
}

/** Formats a string field may be held to (compiled into patterns: the validators import nothing). */
export const STRING_FORMATS = ['email', 'uri', 'uuid', 'date-time'] as const;
export type StringFormat = (typeof STRING_FORMATS)[number];

/** Limits a value must keep, declared in the entity file; each present only when declared. */
export interface ValueConstraints {
  /** Numbers (int, float): inclusive bounds. */
  min?: number;
  max?: number;
  /** Strings: length in characters, a regular expression the value must match, a format. */
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: StringFormat;
  /** Arrays: how many items. */
  minItems?: number;
  maxItems?: number;
}

/** The shape of one value: a field, an array's items, or an object's property. */
export interface ValueModel extends ValueConstraints {
  type: FieldType;
  values?: EnumValue[];
  /** Plural of the referenced entity (objectId). */
  ref?: string;
  items?: ValueModel;
  properties?: FieldModel[];
}

export interface FieldModel extends ValueModel {
  name: string;
  label: string;
  description?: string;
  required: boolean;
  unique: boolean;
  default?: unknown;
  search: boolean;
  trackChanges: boolean;
  /** Never in responses, never writable over HTTP (password and token hashes). */
  hidden: boolean;
  /**
   * Who may see and set the field (`access:` in the entity file); absent, everyone who may see
   * and write the record.
   */
  access?: FieldAccess;
  /** Set by the server only. */
  readOnly: boolean;
  /** Comes from the base (id, ownerId, timestamps, tenantId); set by the server. */
  system: boolean;
  filterable: boolean;
  /**
   * References (objectId, or an array of them) only: deleting the referenced record is refused
   * (restrict, the default), clears this field or removes the id from it (setNull), or deletes
   * this record too (cascade), in the same transaction.
   */
  onDelete?: OnDelete;
  /** One value per locale (`localized: true`); present only on such fields. */
  localized?: LocalizedField;
}

/**
 * A field's `access:`: the roles that may view its value and those that may set it. `owner`
 * stands for the record's owner; ADMIN always may, and so does a role holding the permission
 * `<plural>.<field>:view` or `:edit`. Every role that may edit may view.
 */
export interface FieldAccess {
  view: string[];
  edit: string[];
}

/** The roles every app has, whatever its files say. */
export const BUILTIN_ROLE_KEYS = ['ADMIN', 'USER', 'API', 'ANONYMOUS', 'MODERATOR'] as const;

/** The word in a field's `access:` lists that stands for the record's owner. */
export const OWNER_ROLE = 'owner';

/** A localized field's locales: every available one, and those a required field must have. */
export interface LocalizedField {
  locales: string[];
  /** The config's default locale: a plain value (and a declared default) is its value. */
  defaultLocale: string;
  required: string[];
}

/** The types a field may have to be localized: one scalar per locale. */
export const LOCALIZABLE_TYPES: readonly FieldType[] = ['string', 'url', 'enum', 'int', 'float', 'boolean', 'isoDate'];

/** The config's `locales:`: which a localized field holds, and where a missing value is looked for next. */
export interface LocalesModel {
  default: string;
  available: string[];
  /** A locale's next locales when it has no value, before the default (which always ends the chain). */
  fallback: Record<string, string[]>;
}

export type OnDelete = 'restrict' | 'setNull' | 'cascade';

export interface HistoryRetention {
  keep?: number;
  /** Duration such as `90d`, `12h`. */
  maxAge?: string;
}

export interface TrashModel {
  /** Duration such as `30d`: how long a record stays in the trash before the purge job deletes it. */
  retention: string;
}

/** The action that deletes a record of a trash entity for good (DELETE ?permanent=true). */
export const PURGE_ACTION = 'purge';

export const ENDPOINT_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type EndpointMethod = (typeof ENDPOINT_METHODS)[number];

/** A custom endpoint declared in the entity file; its handler is in the entity's hook module. */
export interface EndpointModel {
  name: string;
  method: EndpointMethod;
  /** Under /api/v1/<plural>: `/{id}/approve` (one record) or `/recalculate` (the collection). */
  path: string;
  /** Whether the path names one record (`{id}`), loaded with the caller's visibility. */
  byId: boolean;
  /** The permission action it needs: a built-in one or a custom one (`<plural>:<action>[:own|:all]`). */
  action: string;
  description?: string;
  /** The request body's fields (POST, PUT, PATCH); validated like a create body. */
  body?: FieldModel[];
  /** `record`: the handler answers a record of this entity, shown as GET shows it; `json`: any JSON value. */
  response: 'record' | 'json';
}

/**
 * A reverse relation: the records of another entity whose reference field names this record
 * (`comments` of an article: comments whose `article` is its id). Served by `populate=<name>`
 * and `GET /{plural}/{id}/<name>`.
 */
export interface RelationModel {
  name: string;
  /** Plural of the referencing entity. */
  entity: string;
  /** Its objectId field (or array of objectId) that references this entity. */
  field: string;
  label: string;
  description?: string;
}

export interface EntityModel {
  name: string;
  plural: string;
  label: string;
  description?: string;
  base: Base;
  ownership: Ownership;
  tenantScoped: boolean;
  versioning: Versioning;
  history?: HistoryRetention;
  /** Deleted records go to a trash (trashedAt set) and are purged after `retention`. */
  trash?: TrashModel;
  /** Runtime-only collection: no generic HTTP routes. */
  internal: boolean;
  /** Where it comes from: the application, the package's built-ins, or a feature. */
  origin: 'app' | 'builtin' | `feature:${string}`;
  fields: FieldModel[];
  filters: string[];
  searchFields: string[];
  /** The field a record is known by where it is referenced (declared, or chosen by name); none without a shown string field. */
  displayField?: string;
  /** Fields declared `sortable`: each has an index for its order (others sort by scan). */
  sortable: string[];
  /** Declared composite indexes: equality fields, then the order field last. */
  indexes?: string[][];
  /** Extra permissions per role key, full strings (`articles:view:status:published`). */
  rolePermissions: Record<string, string[]>;
  /** Every permission string this entity understands, for the role editor. */
  availablePermissions: string[];
  /** Custom endpoints (present only when the entity file declares some). */
  endpoints?: EndpointModel[];
  /** Reverse relations (present only when the entity file declares some). */
  relations?: RelationModel[];
  /** Actions beyond view, create, edit, delete that its endpoints need (present only when there are some). */
  customActions?: string[];
}

export interface TenancyModel {
  entity: string;
  membersField: string;
}

/** A role declared in entigen.config.yaml (`roles:`), with full permission strings. */
export interface RoleModel {
  key: string;
  label: string;
  description?: string;
  permissions: string[];
}

/** A scheduled job declared in entigen.config.yaml (`jobs.schedules`), owned by that file. */
export interface JobScheduleModel {
  name: string;
  handler: string;
  scheduleType: 'cron' | 'interval';
  schedules: string[];
  timezone: string;
  /** A duration such as `10m`; absent: the scheduled job's default. */
  timeout?: string;
  description?: string;
  enabled: boolean;
}

export interface AppModel {
  version: 1;
  app: { name: string };
  features: Feature[];
  tenancy?: TenancyModel;
  /** Roles declared in the config file, by key order; absent when none are. */
  roles?: RoleModel[];
  /** Scheduled jobs declared in the config file, by name order; absent when none are. */
  jobSchedules?: JobScheduleModel[];
  /** The config's `locales:`; absent when the application has none. */
  locales?: LocalesModel;
  entities: EntityModel[];
}
