import AjvModule from 'ajv';
import { isReservedParameter } from '../../runtime/model/listParameters.js';
import type {
  Base,
  EntityModel,
  EnumValue,
  FieldModel,
  FieldType,
  LocalesModel,
  LocalizedField,
  Ownership,
  RelationModel,
  TrashModel,
  ValueConstraints,
  ValueModel,
  Versioning,
} from '../../runtime/model/types.js';
import { LOCALIZABLE_TYPES, OWNER_ROLE, PURGE_ACTION } from '../../runtime/model/types.js';
import { valueSchema } from '../../runtime/model/valueSchema.js';
import type { Diagnostic } from '../diagnostics.js';
import type { PathSegment, SourceFile } from '../schema/loadYaml.js';
import { nearestWord } from '../schema/nearestWord.js';
import { baseFields, reservedBaseNames } from './baseFields.js';
import { checkRolePermissions, defaultRolePermissions, enumeratePermissions } from './entityPermissions.js';
import { humanize } from './naming.js';
import { checkEndpointPaths, isTakenClientName, normalizeEndpoints, type RawEndpoint } from './normalizeEndpoints.js';
import type { RawField, RawValue } from './rawValue.js';

export type { RawField, RawValue } from './rawValue.js';

/** An entity file as the JSON Schema admits it. */
export interface RawEntity {
  version: 1;
  name: string;
  plural: string;
  label?: string;
  description?: string;
  base?: Base;
  ownership?: Ownership;
  tenantScoped?: boolean;
  versioning?: Versioning;
  history?: { keep?: number; maxAge?: string };
  trash?: boolean | { retention?: string };
  internal?: boolean;
  fields: Record<string, RawField>;
  filters?: string[];
  search?: string[];
  displayField?: string;
  sortable?: string[];
  indexes?: string[][];
  permissions?: Record<string, string[]>;
  endpoints?: Record<string, RawEndpoint>;
  relations?: Record<string, RawRelation>;
}

export interface RawRelation {
  entity: string;
  field: string;
  label?: string;
  description?: string;
}

export interface EntityContext {
  source: SourceFile;
  origin: EntityModel['origin'];
  /** Plural of the configured tenant entity, when tenancy is configured. */
  tenancyEntity?: string;
  /** The config's `locales:`, when it has some. */
  locales?: LocalesModel;
  /** Resolves a `ref` (plural or name) to the plural, or undefined. */
  resolveEntity(ref: string): string | undefined;
  knownEntities: readonly string[];
}

const RESERVED_FIELD_NAMES = new Set(['constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty']);
const UNIQUE_UNSUPPORTED: FieldType[] = ['any', 'object', 'array', 'encryptedKey'];
const FILTER_UNSUPPORTED: FieldType[] = ['any', 'object', 'encryptedKey'];

const Ajv = AjvModule.default;
const defaultsAjv = new Ajv({ allErrors: false, strict: false, allowUnionTypes: true });
/** Defaults of the same shape share one compiled check: most models repeat a few shapes many times. */
const defaultChecks = new Map<string, ReturnType<typeof defaultsAjv.compile>>();

/** Applies the base, checks every rule a file can break, and returns the entity's model. */
export function normalizeEntity(
  raw: RawEntity,
  context: EntityContext,
): { entity: EntityModel; diagnostics: Diagnostic[] } {
  const { source } = context;
  const diagnostics: Diagnostic[] = [];
  const report = (path: PathSegment[], message: string, at?: 'key' | 'value') =>
    diagnostics.push(source.diagnostic(path, message, at));

  const { base, ownership } = resolveBase(raw, report);
  const tenantScoped = raw.tenantScoped ?? false;
  if (tenantScoped && !context.tenancyEntity) {
    report(['tenantScoped'], 'needs tenancy in entigen.config.yaml (tenancy: { entity, membersField })');
  }
  const versioning = raw.versioning ?? 'none';
  if (raw.history && versioning === 'none') report(['history'], 'history retention needs versioning: simple or full');

  const reserved = reservedBaseNames(base);
  const declared: FieldModel[] = [];
  for (const [name, rawField] of Object.entries(raw.fields)) {
    const path = ['fields', name];
    if (reserved.has(name)) {
      report(
        path,
        name === 'trashedAt'
          ? 'clashes with "trashedAt", which entities with a trash get (reserved on every entity)'
          : `clashes with the base field "${name}" (base ${base} sets it)`,
        'key',
      );
      continue;
    }
    if (RESERVED_FIELD_NAMES.has(name)) {
      report(path, `"${name}" is a reserved name`, 'key');
      continue;
    }
    const field = normalizeField(name, rawField, path, context, report, true);
    if (field.access && ownership !== 'owned' && field.access.view.includes(OWNER_ROLE))
      report([...path, 'access'], `"${OWNER_ROLE}" needs an entity whose records have an owner (base: owned)`);
    declared.push(field);
  }
  const trash = trashOf(raw);
  if (trash && raw.internal) report(['trash'], 'needs the generic routes, which an internal entity does not have');
  const fields = [
    ...baseFields(base, tenantScoped ? context.tenancyEntity : undefined, trash !== undefined),
    ...declared,
  ];
  const byName = new Map(fields.map((f) => [f.name, f]));

  const filters = checkFilters(raw.filters ?? [], byName, report);
  for (const name of filters) byName.get(name)!.filterable = true;

  const searchFields = [...new Set([...declared.filter((f) => f.search).map((f) => f.name), ...(raw.search ?? [])])];
  (raw.search ?? []).forEach((name, i) => {
    const field = byName.get(name);
    if (!field) report(['search', i], `unknown field "${name}"`);
    else if (!isSearchable(field))
      report(['search', i], `search is only for string fields; "${name}" is ${describeType(field)}`);
    else if (field.hidden) report(['search', i], hiddenSearch(name));
    else if (field.access) report(['search', i], `"${name}" has access rules, so it cannot be searched`);
    else field.search = true;
  });

  const plural = raw.plural;
  const internal = raw.internal ?? false;
  const normalized = normalizeEndpoints(
    raw.endpoints,
    internal,
    (name, rawField, path) => normalizeField(name, rawField, path, context, report, false),
    report,
  );
  const { endpoints } = normalized;
  // A trash adds the purge action: DELETE ?permanent=true is its own permission.
  const actions = [...new Set([...(normalized.customActions ?? []), ...(trash ? [PURGE_ACTION] : [])])];
  const customActions = actions.length > 0 ? actions : undefined;
  checkRolePermissions(
    raw.permissions ?? {},
    { plural, ownership, byName, customActions: customActions ?? [] },
    report,
  );
  const entity: EntityModel = {
    name: raw.name,
    plural,
    label: raw.label ?? humanize(plural),
    ...(raw.description ? { description: raw.description } : {}),
    base,
    ownership,
    tenantScoped,
    versioning,
    ...(raw.history ? { history: raw.history } : {}),
    ...(trash ? { trash } : {}),
    internal,
    origin: context.origin,
    fields,
    filters: fields.filter((f) => f.filterable).map((f) => f.name),
    searchFields: searchFields.filter((name) => byName.get(name)?.search),
    ...displayFieldOf(raw.displayField, fields, declared, report),
    sortable: checkIndexFields(raw.sortable ?? [], ['sortable'], byName, report),
    ...(raw.indexes?.length
      ? { indexes: raw.indexes.map((fields, i) => checkIndexFields(fields, ['indexes', i], byName, report)) }
      : {}),
    rolePermissions: mergeRolePermissions(
      internal ? {} : defaultRolePermissions(plural, ownership),
      raw.permissions ?? {},
      plural,
    ),
    availablePermissions: enumeratePermissions(
      plural,
      ownership,
      customActions,
      declared.filter((f) => f.access).map((f) => f.name),
    ),
    ...(endpoints ? { endpoints } : {}),
    ...(customActions ? { customActions } : {}),
  };
  const relations = normalizeRelations(raw.relations, entity, context, report);
  if (relations.length > 0) entity.relations = relations;
  checkEndpointPaths(entity, report);
  return { entity, diagnostics };
}

/** Fields a record is known by when the entity file names none, in this order. */
const DISPLAY_NAMES = ['title', 'name', 'displayName', 'label', 'subject', 'email', 'key', 'sku'];

/**
 * `displayField`: the declared one (a shown field), else the first string field with a telling
 * name, else the first string field declared; none when the entity has no shown string field.
 */
function displayFieldOf(
  declaredName: string | undefined,
  fields: FieldModel[],
  declared: FieldModel[],
  report: (path: PathSegment[], message: string, at?: 'key' | 'value') => void,
): { displayField?: string } {
  if (declaredName !== undefined) {
    const field = fields.find((f) => f.name === declaredName);
    if (!field) {
      const meant = nearestWord(
        declaredName,
        fields.filter((f) => !f.hidden).map((f) => f.name),
      );
      report(['displayField'], `unknown field "${declaredName}"${meant ? `; did you mean "${meant}"?` : ''}`);
    } else if (field.hidden) report(['displayField'], `"${declaredName}" is hidden, so it cannot name a record`);
    return field && !field.hidden ? { displayField: field.name } : {};
  }
  const text = (f: FieldModel) => f.type === 'string' && !f.hidden && !f.access;
  const named = DISPLAY_NAMES.map((name) => fields.find((f) => f.name === name && text(f))).find(Boolean);
  const chosen = named ?? declared.find(text);
  return chosen ? { displayField: chosen.name } : {};
}

/**
 * The entity file's `relations`, checked on their own: a name no field, endpoint or client method
 * has, and a known entity. Whether that entity's field references this one is checked once every
 * entity is known (buildModel).
 */
function normalizeRelations(
  raw: Record<string, RawRelation> | undefined,
  entity: EntityModel,
  context: EntityContext,
  report: (path: PathSegment[], message: string, at?: 'key' | 'value') => void,
): RelationModel[] {
  const relations: RelationModel[] = [];
  for (const [name, declared] of Object.entries(raw ?? {})) {
    const path: PathSegment[] = ['relations', name];
    if (entity.internal) {
      report(['relations'], 'an internal entity has no routes, so no relations');
      break;
    }
    if (entity.fields.some((f) => f.name === name))
      report(path, `"${name}" is a field of ${entity.plural}; a relation needs a name of its own`, 'key');
    else if (isTakenClientName(name) || entity.endpoints?.some((e) => e.name === name))
      report(path, `"${name}" is taken by the typed client or an endpoint; choose another name`, 'key');
    const plural = context.resolveEntity(declared.entity);
    if (!plural) {
      report([...path, 'entity'], `unknown entity "${declared.entity}"; known: ${context.knownEntities.join(', ')}`);
      continue;
    }
    relations.push({
      name,
      entity: plural,
      field: declared.field,
      label: declared.label ?? humanize(name),
      ...(declared.description ? { description: declared.description } : {}),
    });
  }
  return relations;
}

function resolveBase(
  raw: RawEntity,
  report: (path: PathSegment[], message: string) => void,
): { base: Base; ownership: Ownership } {
  const base: Base = raw.base ?? (raw.ownership === 'system' ? 'system' : 'content');
  const ownership: Ownership = raw.ownership ?? (base === 'system' ? 'system' : 'owned');
  if (base === 'system' && ownership === 'owned')
    report(['ownership'], 'base system has no ownerId; use ownership: system or base: owned');
  if (base !== 'system' && ownership === 'system')
    report(['ownership'], `base ${base} is owned; use base: system for a system-owned entity`);
  return { base, ownership };
}

type Report = (path: PathSegment[], message: string, at?: 'key' | 'value') => void;

function normalizeField(
  name: string,
  raw: RawField,
  path: PathSegment[],
  context: EntityContext,
  report: Report,
  topLevel: boolean,
): FieldModel {
  if (raw.required && raw.optional) report([...path, 'optional'], 'a field cannot be both required and optional');
  const value = normalizeValue(raw, path, context, report);
  const field: FieldModel = {
    name,
    label: raw.label ?? humanize(name),
    ...(raw.description ? { description: raw.description } : {}),
    ...value,
    required: raw.required ?? false,
    unique: raw.unique ?? false,
    search: raw.search ?? false,
    trackChanges: raw.trackChanges ?? false,
    hidden: raw.hidden ?? false,
    readOnly: raw.readOnly ?? false,
    system: false,
    filterable: false,
  };
  if (raw.default !== undefined) {
    const problem = checkDefault(raw.default, field);
    if (problem) report([...path, 'default'], `does not match the field: ${problem}`);
    else field.default = raw.default;
  }
  if (field.unique && UNIQUE_UNSUPPORTED.includes(field.type))
    report([...path, 'unique'], `unique is not supported on ${field.type} fields`);
  if (field.search && !isSearchable(field))
    report([...path, 'search'], `search is only for string fields; this field is ${describeType(field)}`);
  else if (field.search && field.hidden) report([...path, 'search'], hiddenSearch(name));
  const isReference = field.type === 'objectId' || (field.type === 'array' && field.items?.type === 'objectId');
  if (raw.onDelete !== undefined && !isReference)
    report([...path, 'onDelete'], 'onDelete is only for references (objectId, or an array of them)');
  else if (isReference && topLevel) {
    field.onDelete = raw.onDelete ?? 'restrict';
    if (field.onDelete === 'setNull' && field.required && field.type === 'objectId')
      report([...path, 'onDelete'], 'setNull needs a field that is not required; use cascade or restrict');
  }
  if (field.trackChanges && field.hidden)
    report([...path, 'trackChanges'], 'a hidden field cannot track changes: its values never leave the server');
  if (raw.access && topLevel) {
    const edit = [...(raw.access.edit ?? [])];
    field.access = { view: [...new Set([...(raw.access.view ?? []), ...edit])], edit };
    if (field.hidden)
      report([...path, 'access'], 'a hidden field is never seen or set over HTTP; access cannot open it to some roles');
    else if (field.search)
      report(
        [...path, 'search'],
        `"${name}" has access rules, so it cannot be searched: ?q= would tell callers who may not view it which records hold a guessed value`,
      );
  }
  if (raw.localized && topLevel) {
    const localized = localizedField(raw.localized, field, [...path, 'localized'], context, report);
    if (localized) field.localized = localized;
  }
  if (!topLevel) {
    for (const option of ['unique', 'search', 'trackChanges', 'hidden', 'localized', 'access'] as const) {
      if (raw[option]) report([...path, option], `${option} applies only to top-level fields`);
    }
  }
  return field;
}

/** Text search over a hidden field would answer which records hold a guessed value. */
const hiddenSearch = (name: string) =>
  `"${name}" is hidden, so it cannot be searched: ?q= would tell anyone which records hold a guessed value`;

/** `localized:` of a field: its type one scalar, the config declaring locales, required ones among them. */
function localizedField(
  raw: NonNullable<RawField['localized']>,
  field: FieldModel,
  path: PathSegment[],
  context: EntityContext,
  report: Report,
): LocalizedField | undefined {
  const locales = context.locales;
  if (!locales) {
    report(path, 'a localized field needs `locales:` in entigen.config.yaml');
    return undefined;
  }
  if (!LOCALIZABLE_TYPES.includes(field.type))
    report(path, `only ${LOCALIZABLE_TYPES.join(', ')} fields can be localized; this field is ${describeType(field)}`);
  if (field.hidden) report(path, 'a hidden field cannot be localized');
  const declared = typeof raw === 'object' ? raw.required : undefined;
  const required = declared === 'all' ? locales.available : (declared ?? [locales.default]);
  for (const [i, locale] of (Array.isArray(declared) ? declared : []).entries())
    if (!locales.available.includes(locale))
      report([...path, 'required', i], `"${locale}" is not an available locale (${locales.available.join(', ')})`);
  if (declared !== undefined && !field.required)
    report([...path, 'required'], 'required locales apply to a required field; add required: true');
  return { locales: [...locales.available], defaultLocale: locales.default, required: [...required] };
}

function normalizeValue(raw: RawValue, path: PathSegment[], context: EntityContext, report: Report): ValueModel {
  const value: ValueModel = { type: raw.type };
  if (raw.values !== undefined && raw.type !== 'enum') report([...path, 'values'], 'values are only for enum fields');
  if (raw.type === 'enum') {
    if (!raw.values || raw.values.length === 0) report([...path, 'type'], 'an enum needs a non-empty values list');
    else value.values = normalizeEnumValues(raw.values, [...path, 'values'], report);
  }
  if (raw.ref !== undefined && raw.type !== 'objectId') report([...path, 'ref'], 'ref is only for objectId fields');
  if (raw.type === 'objectId') {
    if (raw.ref === undefined) report([...path, 'type'], 'an objectId needs ref naming the referenced entity');
    else {
      const plural = context.resolveEntity(raw.ref);
      if (plural) value.ref = plural;
      else report([...path, 'ref'], `unknown entity "${raw.ref}"; entities: ${context.knownEntities.join(', ')}`);
    }
  }
  if (raw.items !== undefined && raw.type !== 'array') report([...path, 'items'], 'items is only for array fields');
  if (raw.type === 'array') {
    value.items = raw.items ? normalizeValue(raw.items, [...path, 'items'], context, report) : { type: 'any' };
    if (value.items.type === 'array')
      report([...path, 'items', 'type'], 'arrays of arrays are not supported; use an object or any');
  }
  if (raw.properties !== undefined && raw.type !== 'object')
    report([...path, 'properties'], 'properties are only for object fields');
  if (raw.type === 'object' && raw.properties) {
    value.properties = Object.entries(raw.properties).map(([name, property]) =>
      normalizeField(name, property, [...path, 'properties', name], context, report, false),
    );
  }
  Object.assign(value, normalizeConstraints(raw, path, report));
  return value;
}

const NUMBER_TYPES = ['int', 'float'];
const STRING_TYPES = ['string', 'url'];
const CONSTRAINT_TYPES: Record<keyof ValueConstraints, { types: string[]; what: string }> = {
  min: { types: NUMBER_TYPES, what: 'numbers (int, float)' },
  max: { types: NUMBER_TYPES, what: 'numbers (int, float)' },
  minLength: { types: STRING_TYPES, what: 'strings (string, url)' },
  maxLength: { types: STRING_TYPES, what: 'strings (string, url)' },
  pattern: { types: STRING_TYPES, what: 'strings (string, url)' },
  format: { types: ['string'], what: 'string fields' },
  minItems: { types: ['array'], what: 'arrays' },
  maxItems: { types: ['array'], what: 'arrays' },
};

/** The declared constraints that apply to the value's type; the ones that cannot apply are reported. */
function normalizeConstraints(raw: RawValue, path: PathSegment[], report: Report): ValueConstraints {
  const out: ValueConstraints = {};
  for (const [name, rule] of Object.entries(CONSTRAINT_TYPES) as [
    keyof ValueConstraints,
    (typeof CONSTRAINT_TYPES)['min'],
  ][]) {
    if (raw[name] === undefined) continue;
    if (!rule.types.includes(raw.type)) report([...path, name], `${name} applies to ${rule.what}, not to ${raw.type}`);
    else (out as Record<string, unknown>)[name] = raw[name];
  }
  const pairs: [keyof ValueConstraints, keyof ValueConstraints][] = [
    ['min', 'max'],
    ['minLength', 'maxLength'],
    ['minItems', 'maxItems'],
  ];
  for (const [low, high] of pairs) {
    const a = out[low] as number | undefined;
    const b = out[high] as number | undefined;
    if (a !== undefined && b !== undefined && a > b)
      report([...path, low], `${low} (${a}) is greater than ${high} (${b}): no value could pass`);
  }
  if (raw.type === 'int') {
    for (const name of ['min', 'max'] as const) {
      const bound = out[name];
      if (bound !== undefined && !Number.isSafeInteger(bound))
        report([...path, name], `${name} of an int field must be a safe integer`);
    }
  }
  if (out.pattern !== undefined) {
    try {
      new RegExp(out.pattern, 'u');
    } catch (error) {
      report([...path, 'pattern'], `is not a valid regular expression: ${(error as Error).message}`);
      delete out.pattern;
    }
  }
  return out;
}

function normalizeEnumValues(
  values: NonNullable<RawValue['values']>,
  path: PathSegment[],
  report: Report,
): EnumValue[] {
  const seen = new Set<string>();
  const out: EnumValue[] = [];
  values.forEach((entry, i) => {
    const value =
      typeof entry === 'string' ? { key: entry, label: entry } : { key: entry.key, label: entry.label ?? entry.key };
    if (seen.has(value.key)) report([...path, i], `duplicate enum value "${value.key}"`);
    seen.add(value.key);
    out.push(value);
  });
  return out;
}

function checkDefault(value: unknown, field: FieldModel): string | undefined {
  if (
    field.type === 'enum' &&
    typeof value === 'string' &&
    field.values &&
    !field.values.some((v) => v.key === value)
  ) {
    return `"${value}" is not one of ${field.values.map((v) => v.key).join(', ')}`;
  }
  const schema = valueSchema(field);
  const cacheKey = JSON.stringify(schema);
  let validate = defaultChecks.get(cacheKey);
  if (!validate) {
    validate = defaultsAjv.compile(schema);
    defaultChecks.set(cacheKey, validate);
  }
  if (validate(value)) return undefined;
  const error = validate.errors?.[0];
  return `${error?.instancePath ? `${error.instancePath.slice(1).replace(/\//g, '.')} ` : ''}${error?.message ?? 'invalid'} (type ${describeType(field)})`;
}

function checkFilters(filters: string[], byName: Map<string, FieldModel>, report: Report): string[] {
  const valid: string[] = [];
  filters.forEach((name, i) => {
    const field = byName.get(name);
    // A filter named like a list parameter could never be addressed.
    if (isReservedParameter(name))
      report(['filters', i], `"${name}" is a list or aggregate query parameter and cannot be a filter`);
    else if (!field) report(['filters', i], `unknown field "${name}"`);
    else if (field.hidden) report(['filters', i], `"${name}" is hidden and cannot be a filter`);
    else if (
      FILTER_UNSUPPORTED.includes(field.type) ||
      (field.type === 'array' && FILTER_UNSUPPORTED.includes(field.items!.type))
    ) {
      report(['filters', i], `cannot filter on ${describeType(field)} field "${name}"`);
    } else valid.push(name);
  });
  return valid;
}

/** Types an index can order and compare (the list's sortable types). */
const INDEXABLE_TYPES: FieldType[] = ['string', 'url', 'enum', 'int', 'float', 'boolean', 'isoDate', 'objectId'];

/** `sortable` and `indexes` entries: visible fields of a type an index orders. */
function checkIndexFields(
  names: string[],
  path: PathSegment[],
  byName: Map<string, FieldModel>,
  report: Report,
): string[] {
  const valid: string[] = [];
  names.forEach((name, i) => {
    const field = byName.get(name);
    if (!field) report([...path, i], `unknown field "${name}"`);
    else if (field.hidden) report([...path, i], `"${name}" is hidden: lists neither filter nor sort by it`);
    else if (!INDEXABLE_TYPES.includes(field.type))
      report([...path, i], `an index cannot order ${describeType(field)} field "${name}"`);
    else valid.push(name);
  });
  return valid;
}

function isSearchable(field: ValueModel): boolean {
  if (field.type === 'array') return field.items?.type === 'string';
  return field.type === 'string' || field.type === 'url';
}

function describeType(value: ValueModel): string {
  return value.type === 'array' ? `array of ${value.items?.type ?? 'any'}` : value.type;
}

function mergeRolePermissions(
  defaults: Record<string, string[]>,
  extra: Record<string, string[]>,
  plural: string,
): Record<string, string[]> {
  const merged: Record<string, string[]> = {};
  for (const [role, list] of Object.entries(defaults)) merged[role] = [...list];
  for (const [role, list] of Object.entries(extra)) {
    merged[role] = [...new Set([...(merged[role] ?? []), ...list.map((p) => `${plural}:${p}`)])];
  }
  return merged;
}

const DEFAULT_TRASH_RETENTION = '30d';

/** `trash: true` or `trash: { retention }`, with the default retention; absent or false: none. */
function trashOf(raw: RawEntity): TrashModel | undefined {
  if (!raw.trash) return undefined;
  return { retention: (raw.trash === true ? undefined : raw.trash.retention) ?? DEFAULT_TRASH_RETENTION };
}
