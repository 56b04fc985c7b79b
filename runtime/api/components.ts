import type { Static } from '@sinclair/typebox';
import { Component, Dictionary, Enum, Nullable } from './schemas.js';
import { Type } from './typebox.js';

// The shapes every entity's history and metadata routes answer: components of the OpenAPI document
// (#/components/schemas/<name>), the typed client's and the admin console's types.

const CHANGE_TYPES = ['create', 'update', 'delete', 'archive', 'restore', 'revert', 'trash', 'untrash'] as const;
const FIELD_NAMES = Nullable(Type.Array(Type.String()));
const CHANGED_FROM = Type.Optional(
  Type.String({ description: "The client's address the change came from; administrators only" }),
);

export const Version = Type.Object({
  id: Type.String(),
  entityId: Type.String(),
  version: Type.Integer(),
  snapshot: Type.Unknown(),
  changedBy: Type.String(),
  changedFrom: CHANGED_FROM,
  changeReason: Type.Optional(Nullable(Type.String())),
  changeType: Enum(CHANGE_TYPES),
  changedFields: Type.Optional(FIELD_NAMES),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const VersionSummary = Type.Object({
  version: Type.Integer(),
  createdAt: Type.String(),
  changedBy: Type.String(),
});

export const VersionComparison = Type.Object({
  entityId: Type.String(),
  versionA: Component<Static<typeof VersionSummary>>('VersionSummary'),
  versionB: Component<Static<typeof VersionSummary>>('VersionSummary'),
  changes: Type.Array(
    Type.Object({
      field: Type.String(),
      oldValue: Type.Optional(Type.Unknown()),
      newValue: Type.Optional(Type.Unknown()),
      changed: Type.Boolean(),
    }),
  ),
  totalChanges: Type.Integer(),
});

export const AuditLog = Type.Object({
  id: Type.String(),
  entityId: Type.String(),
  changedBy: Type.String(),
  changedFrom: CHANGED_FROM,
  changeType: Enum(CHANGE_TYPES),
  changedFields: Type.Optional(FIELD_NAMES),
  changes: Type.Optional(
    Type.Unsafe<Record<string, { old?: unknown; new?: unknown }> | null>({
      type: ['object', 'null'],
      additionalProperties: { type: 'object', properties: { old: {}, new: {} } },
    }),
  ),
  changeReason: Type.Optional(Nullable(Type.String())),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const FieldChange = Type.Object({
  id: Type.String(),
  entityId: Type.String(),
  fieldName: Type.String(),
  oldValue: Type.Optional(Type.Unknown()),
  newValue: Type.Optional(Type.Unknown()),
  changedBy: Type.String(),
  changeReason: Type.Optional(Nullable(Type.String())),
  approvedBy: Type.Optional(Nullable(Type.String())),
  approvalStatus: Type.Optional(
    Type.Unsafe<'pending' | 'approved' | 'rejected' | null>({ enum: ['pending', 'approved', 'rejected', null] }),
  ),
  metadata: Type.Optional(Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'] })),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

/** A field as the metadata routes describe it; an object's declared properties are fields too. */
export interface FieldMetadata {
  name: string;
  label: string;
  type: string;
  required: boolean;
  unique: boolean;
  default: unknown;
  values: { key: string; label: string }[] | null;
  ref: string | null;
  items: { type: string } | null;
  search: boolean;
  trackChanges: boolean;
  filterable: boolean;
  readOnly: boolean;
  properties?: FieldMetadata[];
  operators?: string[];
  constraints?: Record<string, unknown>;
  localized?: { locales: string[]; defaultLocale: string; required: string[] };
  access?: {
    view: string[];
    edit: string[];
    caller?: { view: 'all' | 'own' | 'none'; edit: 'all' | 'own' | 'none' };
  };
}

// Recursive (properties of properties): its type is the interface above, its schema refers to itself.
export const FieldMetadata = Type.Unsafe<FieldMetadata>(
  Type.Object({
    name: Type.String(),
    label: Type.String(),
    type: Type.String(),
    required: Type.Boolean(),
    unique: Type.Boolean(),
    default: Type.Unknown({ description: 'The default value, or null' }),
    values: Nullable(Type.Array(Type.Object({ key: Type.String(), label: Type.String() }))),
    ref: Nullable(Type.String()),
    items: Type.Unsafe<{ type: string } | null>({
      type: ['object', 'null'],
      properties: { type: { type: 'string' } },
      description: "A list: its items' type",
    }),
    search: Type.Boolean(),
    trackChanges: Type.Boolean(),
    filterable: Type.Boolean(),
    readOnly: Type.Boolean({ description: 'Set by the server: shown, never written by a client' }),
    properties: Type.Optional(
      Type.Array(Component('FieldMetadata'), {
        description: 'Objects with declared properties: each property as a field',
      }),
    ),
    operators: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Filters only: the comparison operators the list takes as `field[op]=value`',
      }),
    ),
    localized: Type.Optional(
      Type.Object(
        {
          locales: Type.Array(Type.String()),
          defaultLocale: Type.String(),
          required: Type.Array(Type.String(), { description: 'The locales a required field must have a value in' }),
        },
        { description: 'Localized fields only: one value per locale' },
      ),
    ),
    access: Type.Optional(
      Type.Object(
        {
          view: Type.Array(Type.String(), { description: 'Roles that may see the value; `owner`: the record’s owner' }),
          edit: Type.Array(Type.String(), { description: 'Roles that may set it' }),
          caller: Type.Optional(
            Type.Object(
              { view: Enum(['all', 'own', 'none']), edit: Enum(['all', 'own', 'none']) },
              {
                description:
                  'Where the caller asking may see and set it: on every record, on their own records only, or on none',
              },
            ),
          ),
        },
        { description: 'Fields under access rules only: who may see and set them (ADMIN always may)' },
      ),
    ),
    constraints: Type.Optional(
      Type.Object(
        {
          min: Type.Optional(Type.Number()),
          max: Type.Optional(Type.Number()),
          minLength: Type.Optional(Type.Integer()),
          maxLength: Type.Optional(Type.Integer()),
          pattern: Type.Optional(Type.String()),
          format: Type.Optional(Enum(['email', 'uri', 'uuid', 'date-time'])),
          minItems: Type.Optional(Type.Integer()),
          maxItems: Type.Optional(Type.Integer()),
          items: Type.Optional(Type.Object({})),
        },
        {
          description:
            "The field's declared constraints (present only when it has some); items: those of an array's items",
        },
      ),
    ),
  }),
);

export const EntityMetadata = Type.Object({
  name: Type.String(),
  plural: Type.String(),
  label: Type.String(),
  description: Nullable(Type.String()),
  base: Type.String(),
  ownership: Type.String(),
  versioning: Type.String(),
  tenantScoped: Type.Boolean(),
  filters: Type.Array(Type.String()),
  searchFields: Type.Array(Type.String()),
  displayField: Nullable(
    Type.String({
      description:
        'The field a record is known by where it is referenced (declared as displayField, else chosen by name); null without a shown string field',
    }),
  ),
  origin: Type.String({
    description: 'Where the entity comes from: `app` (the entity files), `builtin` (the package), `feature:<name>`',
  }),
  sortable: Type.Array(Type.String(), {
    description: 'Fields declared sortable: an index serves their order (any field may still be sorted on)',
  }),
  trash: Type.Optional(
    Type.Object(
      {
        retention: Type.String({
          description: 'How long a record stays in the trash before it is purged, such as 30d',
        }),
      },
      {
        description:
          'Entities that keep a trash: DELETE moves records there, GET ?trash=only lists them, POST /{id}/restore-from-trash takes one back, DELETE ?permanent=true needs the purge permission',
      },
    ),
  ),
  statusTransitions: Type.Optional(
    Dictionary(Type.Array(Type.String()), {
      description: 'Content base only: for each status, the statuses an update may move it to',
    }),
  ),
  relations: Type.Array(
    Type.Object({
      name: Type.String(),
      label: Type.String(),
      entity: Type.String(),
      field: Type.String(),
      description: Type.Optional(Nullable(Type.String())),
    }),
    { description: 'Reverse relations: populate=<name> and GET /{plural}/{id}/<name>' },
  ),
  endpoints: Type.Array(
    Type.Object({
      name: Type.String(),
      method: Enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
      path: Type.String({
        description: 'Under /api/v1/{plural}: /{id}/<name> on one record, /<name> on the collection',
      }),
      action: Type.String({ description: 'The permission action the caller needs on the entity' }),
      description: Nullable(Type.String()),
      body: Nullable(
        Type.Array(Component<FieldMetadata>('FieldMetadata'), { description: 'The request body, declared as fields' }),
      ),
      response: Enum(['record', 'json']),
    }),
    { description: "The entity's custom endpoints" },
  ),
  fields: Type.Optional(Type.Array(Component<FieldMetadata>('FieldMetadata'))),
});

/** The components of the document, by name. */
export const COMPONENTS = {
  Version,
  VersionComparison,
  VersionSummary,
  AuditLog,
  FieldChange,
  EntityMetadata,
  FieldMetadata,
} as const;
