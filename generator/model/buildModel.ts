import { customActionsOf, parsePermission } from '../../runtime/access/parsePermission.js';
import { MAX_THROUGH_DEPTH, permissionProblem } from '../../runtime/access/permissionCondition.js';
import { USERS } from '../../runtime/model/collections.js';
import { isValidTimezone, scheduleProblem } from '../../runtime/model/schedule.js';
import type {
  AppModel,
  EntityModel,
  Feature,
  JobScheduleModel,
  LocalesModel,
  RoleModel,
  TenancyModel,
} from '../../runtime/model/types.js';
import { BUILTIN_ROLE_KEYS, OWNER_ROLE } from '../../runtime/model/types.js';
import type { Diagnostic } from '../diagnostics.js';
import type { PathSegment, SourceFile } from '../schema/loadYaml.js';
import { normalizeEntity, type RawEntity } from './normalizeEntity.js';
import { typeNamesOf } from './typeNames.js';

export interface EntitySource {
  source: SourceFile;
  origin: EntityModel['origin'];
  /** False when the file failed its schema check. */
  valid: boolean;
  /** The parts of the file that passed the schema check, for the semantic checks; undefined if none can run. */
  checkable?: Record<string, unknown>;
}

export interface RawConfig {
  version: 1;
  app?: { name?: string };
  features?: Feature[];
  tenancy?: { entity: string; membersField: string };
  roles?: Record<string, { label?: string; description?: string; permissions?: string[] }>;
  jobs?: { handlers?: string; schedules?: Record<string, RawJobSchedule> };
  locales?: { default: string; available: string[]; fallback?: Record<string, string | string[]> };
}

/** One entry of `jobs.schedules` as the config schema admits it. */
interface RawJobSchedule {
  handler: string;
  cron?: string | string[];
  interval?: string | string[];
  timezone?: string;
  timeout?: string;
  description?: string;
  enabled?: boolean;
}

/**
 * The config's `roles:`, each permission checked like a stored role's (a known entity and
 * action, a condition on a field that can hold its value), reported at its place in the file.
 */
function configRoles(
  config: { source?: SourceFile; raw: RawConfig },
  entities: readonly EntityModel[],
  diagnostics: Diagnostic[],
): RoleModel[] {
  const declared = config.raw.roles ?? {};
  const customActions = customActionsOf({ entities });
  return Object.keys(declared)
    .sort()
    .map((key) => {
      const role = declared[key];
      const permissions = role.permissions ?? [];
      permissions.forEach((text, i) => {
        const problem = permissionProblem(text, entities, customActions);
        if (problem && config.source) {
          diagnostics.push(config.source.diagnostic(['roles', key, 'permissions', i], `"${text}": ${problem}`));
        }
      });
      return {
        key,
        label: role.label ?? roleLabel(key),
        ...(role.description ? { description: role.description } : {}),
        permissions,
      };
    });
}

/**
 * The config's `jobs.schedules`: each with exactly one of `cron` and `interval`, valid
 * expressions and timezone. Whether the handlers module exports each handler is checked
 * with the module's text (checkJobHandlers).
 */
function configJobSchedules(
  config: { source?: SourceFile; raw: RawConfig },
  diagnostics: Diagnostic[],
): JobScheduleModel[] {
  const declared = config.raw.jobs?.schedules ?? {};
  const report = (path: PathSegment[], message: string) => {
    if (config.source) diagnostics.push(config.source.diagnostic(['jobs', 'schedules', ...path], message));
  };
  return Object.keys(declared)
    .sort()
    .map((name) => {
      const job = declared[name];
      if ((job.cron === undefined) === (job.interval === undefined)) {
        report([name], 'needs exactly one of cron and interval');
      }
      const scheduleType = job.interval !== undefined ? 'interval' : 'cron';
      const raw = job.interval ?? job.cron ?? [];
      const schedules = Array.isArray(raw) ? raw : [raw];
      schedules.forEach((expression, i) => {
        const problem = scheduleProblem(scheduleType, expression);
        if (problem) report(Array.isArray(raw) ? [name, scheduleType, i] : [name, scheduleType], problem);
      });
      const timezone = job.timezone ?? 'UTC';
      if (!isValidTimezone(timezone)) {
        report([name, 'timezone'], `"${timezone}" is not an IANA timezone such as UTC or Europe/Berlin`);
      }
      return {
        name,
        handler: job.handler,
        scheduleType,
        schedules,
        timezone,
        ...(job.timeout ? { timeout: job.timeout } : {}),
        ...(job.description ? { description: job.description } : {}),
        enabled: job.enabled ?? true,
      };
    });
}

/**
 * Rules through references (`comments:view:@ticket`) follow at most MAX_THROUGH_DEPTH
 * references and never come back to where they started: a cycle or a longer chain is an error
 * at the rule that makes it.
 */
function checkThroughChains(
  entities: readonly EntityModel[],
  sources: readonly EntitySource[],
  roles: readonly RoleModel[],
  configSource: SourceFile | undefined,
  diagnostics: Diagnostic[],
): void {
  const byPlural = new Map(entities.map((e) => [e.plural, e]));
  const edges: { from: string; to: string; text: string; report: (message: string) => void }[] = [];
  const add = (text: string, report: (message: string) => void) => {
    const parsed = parsePermission(text, 'any');
    if (!parsed.ok || !parsed.permission.through) return;
    const field = byPlural.get(parsed.permission.entity)?.fields.find((f) => f.name === parsed.permission.through);
    const to = field?.type === 'array' ? field.items?.ref : field?.ref;
    if (to) edges.push({ from: parsed.permission.entity, to, text, report });
  };
  for (const entity of entities) {
    const source = sources.find((s) => (s.source.data as RawEntity).plural === entity.plural)?.source;
    const raw = ((source?.data as RawEntity | undefined)?.permissions ?? {}) as Record<string, string[]>;
    for (const [role, texts] of Object.entries(raw)) {
      for (const [i, text] of texts.entries()) {
        add(`${entity.plural}:${text}`, (message) => {
          diagnostics.push(source!.diagnostic(['permissions', role, i], `"${text}": ${message}`));
        });
      }
    }
  }
  for (const role of roles) {
    for (const [i, text] of role.permissions.entries()) {
      add(text, (message) => {
        if (configSource)
          diagnostics.push(configSource.diagnostic(['roles', role.key, 'permissions', i], `"${text}": ${message}`));
      });
    }
  }
  const next = new Map<string, Set<string>>();
  for (const edge of edges) next.set(edge.from, (next.get(edge.from) ?? new Set()).add(edge.to));
  /** The longest chain of references from `plural`, or a cycle through it (its path). */
  const longest = (plural: string, path: string[]): { length: number; cycle?: string[] } => {
    if (path.includes(plural)) return { length: Infinity, cycle: [...path.slice(path.indexOf(plural)), plural] };
    let best: { length: number; cycle?: string[] } = { length: 0 };
    for (const to of next.get(plural) ?? []) {
      const found = longest(to, [...path, plural]);
      if (found.cycle) return found;
      if (found.length + 1 > best.length) best = { length: found.length + 1 };
    }
    return best;
  };
  for (const edge of edges) {
    const found = longest(edge.to, [edge.from]);
    if (found.cycle) edge.report(`rules through references go round in a circle: ${found.cycle.join(' -> ')}`);
    else if (found.length + 1 > MAX_THROUGH_DEPTH) {
      edge.report(
        `follows ${found.length + 1} references from ${edge.from}; at most ${MAX_THROUGH_DEPTH} are followed`,
      );
    }
  }
}

/** SUPPORT_LEAD -> Support lead. */
function roleLabel(key: string): string {
  const words = key.toLowerCase().replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Path segments under /api/v1 that the runtime serves itself. */
const RESERVED_SEGMENTS = [
  'auth',
  'schema',
  'search',
  'apikeys',
  'docs',
  'health',
  'setup',
  'users',
  'roles',
  'field-changes',
  'batch',
];
export const DEFAULT_APP_NAME = 'entigen';

/** Cross-file checks and normalization: the model is the emitters' only input. */
export function buildModel(
  entitySources: EntitySource[],
  config: { source?: SourceFile; raw: RawConfig },
): { model: AppModel; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const byPlural = new Map<string, EntitySource>();
  const byName = new Map<string, string>();
  const pluralOf = new Map<string, string>();

  for (const entry of entitySources) {
    const raw = entry.source.data as Partial<RawEntity>;
    if (typeof raw?.plural === 'string') {
      const other = byPlural.get(raw.plural.toLowerCase());
      if (other)
        diagnostics.push(
          entry.source.diagnostic(['plural'], `duplicate plural "${raw.plural}"; also in ${other.source.file}`),
        );
      else byPlural.set(raw.plural.toLowerCase(), entry);
      pluralOf.set(raw.plural, raw.plural);
      if (entry.origin === 'app' && !raw.internal && RESERVED_SEGMENTS.includes(raw.plural.toLowerCase())) {
        diagnostics.push(
          entry.source.diagnostic(['plural'], `"${raw.plural}" is reserved for the runtime's own routes`),
        );
      }
    }
    if (typeof raw?.name === 'string') {
      const other = byName.get(raw.name);
      if (other) diagnostics.push(entry.source.diagnostic(['name'], `duplicate name "${raw.name}"; also in ${other}`));
      else byName.set(raw.name, entry.source.file);
      if (typeof raw.plural === 'string') pluralOf.set(raw.name, raw.plural);
    }
  }
  const knownEntities = [...pluralOf.keys()]
    .filter((key) => pluralOf.get(key) === key && /^[a-z][A-Za-z0-9]*$/.test(key))
    .sort();
  const resolveEntity = (ref: string) => pluralOf.get(ref);

  const tenancy = checkTenancy(config, resolveEntity, entitySources, diagnostics);
  const locales = configLocales(config, diagnostics);
  const entities: EntityModel[] = [];
  for (const entry of entitySources) {
    if (!entry.checkable) continue;
    const result = normalizeEntity(entry.checkable as unknown as RawEntity, {
      source: entry.source,
      origin: entry.origin,
      tenancyEntity: tenancy?.entity,
      locales,
      resolveEntity,
      knownEntities,
    });
    diagnostics.push(...result.diagnostics);
    if (entry.valid) entities.push(result.entity);
  }
  checkTypeNames(entities, entitySources, diagnostics, locales !== undefined);
  checkCascadeCycles(entities, entitySources, diagnostics);
  checkRelations(entities, entitySources, diagnostics);

  entities.sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0));
  const roles = configRoles(config, entities, diagnostics);
  checkFieldAccess(entities, entitySources, roles, diagnostics);
  checkThroughChains(entities, entitySources, roles, config.source, diagnostics);
  const jobSchedules = configJobSchedules(config, diagnostics);
  const model: AppModel = {
    version: 1,
    app: { name: config.raw.app?.name ?? DEFAULT_APP_NAME },
    features: [...(config.raw.features ?? [])].sort(),
    ...(tenancy ? { tenancy } : {}),
    ...(roles.length > 0 ? { roles } : {}),
    ...(jobSchedules.length > 0 ? { jobSchedules } : {}),
    ...(locales ? { locales } : {}),
    entities,
  };
  return { model, diagnostics };
}

/**
 * The config's `locales:`: the default among the available ones, and each fallback naming
 * available locales (a chain visits each locale once, and the default ends it).
 */
function configLocales(
  config: { source?: SourceFile; raw: RawConfig },
  diagnostics: Diagnostic[],
): LocalesModel | undefined {
  const declared = config.raw.locales;
  if (!declared) return undefined;
  const report = (path: (string | number)[], message: string) => {
    if (config.source) diagnostics.push(config.source.diagnostic(['locales', ...path], message));
  };
  const available = new Set(declared.available);
  if (!available.has(declared.default))
    report(['default'], `"${declared.default}" is not one of the available locales (${declared.available.join(', ')})`);
  const fallback: Record<string, string[]> = {};
  for (const [locale, next] of Object.entries(declared.fallback ?? {})) {
    const list = typeof next === 'string' ? [next] : next;
    if (!available.has(locale)) report(['fallback', locale], `"${locale}" is not an available locale`);
    for (const [i, item] of list.entries())
      if (!available.has(item))
        report(['fallback', locale, ...(typeof next === 'string' ? [] : [i])], `"${item}" is not an available locale`);
    fallback[locale] = list.filter((item) => item !== locale);
  }
  return { default: declared.default, available: [...declared.available], fallback };
}

function checkTenancy(
  config: { source?: SourceFile; raw: RawConfig },
  resolveEntity: (ref: string) => string | undefined,
  entitySources: EntitySource[],
  diagnostics: Diagnostic[],
): TenancyModel | undefined {
  const tenancy = config.raw.tenancy;
  if (!tenancy || !config.source) return undefined;
  const plural = resolveEntity(tenancy.entity);
  if (!plural) {
    diagnostics.push(config.source.diagnostic(['tenancy', 'entity'], `unknown entity "${tenancy.entity}"`));
    return undefined;
  }
  const source = entitySources.find((e) => (e.source.data as RawEntity).plural === plural);
  const members = (source?.source.data as RawEntity | undefined)?.fields?.[tenancy.membersField];
  const membersOk =
    members?.type === 'array' && members.items?.type === 'objectId' && resolveEntity(members.items.ref ?? '') === USERS;
  if (!membersOk) {
    diagnostics.push(
      config.source.diagnostic(
        ['tenancy', 'membersField'],
        `"${tenancy.membersField}" must be a field of ${plural} declared as { type: array, items: { type: objectId, ref: users } }`,
      ),
    );
    return undefined;
  }
  return { entity: plural, membersField: tenancy.membersField };
}

function checkTypeNames(
  entities: EntityModel[],
  sources: EntitySource[],
  diagnostics: Diagnostic[],
  localized: boolean,
): void {
  // With locales, types.ts declares Locale and Localized<T> beside the entities' types.
  const owners = new Map<string, string>(
    localized
      ? [
          ['Locale', 'locales'],
          ['Localized', 'locales'],
        ]
      : [],
  );
  const names = new Set<string>();
  for (const entity of entities) {
    if (names.has(entity.name)) continue; // already reported as a duplicate name
    names.add(entity.name);
    const typeNames = typeNamesOf(entity);
    for (const typeName of [typeNames.record, typeNames.create, typeNames.update, ...typeNames.enums.values()]) {
      const owner = owners.get(typeName);
      if (owner && owner !== entity.plural) {
        const source = sources.find((s) => (s.source.data as RawEntity).plural === entity.plural)!.source;
        diagnostics.push(
          source.diagnostic(
            ['name'],
            owner === 'locales'
              ? `generated type name ${typeName} is taken by the locales' types; choose another name`
              : `generated type name ${typeName} clashes with one of entity ${owner}`,
          ),
        );
      }
      owners.set(typeName, entity.plural);
    }
  }
}

/**
 * Deleting a record cascades along `onDelete: cascade` references; a cycle of them (an entity
 * that, through cascades, deletes its own kind) is a build error at the field that closes it.
 */
function checkCascadeCycles(entities: EntityModel[], sources: EntitySource[], diagnostics: Diagnostic[]): void {
  // referenced entity -> [referencing entity, field]
  const edges = new Map<string, [string, string][]>();
  for (const entity of entities)
    for (const field of entity.fields) {
      if (field.onDelete !== 'cascade') continue;
      const target = field.type === 'array' ? field.items?.ref : field.ref;
      if (!target) continue;
      edges.set(target, [...(edges.get(target) ?? []), [entity.plural, field.name]]);
    }
  const reported = new Set<string>();
  const visit = (plural: string, path: string[]): void => {
    for (const [next, field] of edges.get(plural) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const key = `${next}.${field}`;
        if (reported.has(key)) continue;
        reported.add(key);
        const source = sources.find((s) => (s.source.data as RawEntity).plural === next)?.source;
        const cycle = [...path.slice(Math.max(at, 0)), next].join(' -> ');
        if (source)
          diagnostics.push(
            source.diagnostic(['fields', field, 'onDelete'], `cascade makes a cycle of deletes: ${cycle}`),
          );
        continue;
      }
      if (path.length < 50) visit(next, [...path, next]);
    }
  };
  for (const plural of edges.keys()) visit(plural, [plural]);
}

/** Each relation names an entity with routes and its visible reference field to this entity. */
/**
 * Each role a field's `access:` names exists without the store: a built-in, one of the config's
 * `roles:`, one an entity file's `permissions:` names, or `owner`. A role made through the API
 * gets a field with the permission `<plural>.<field>:view` or `:edit` instead.
 */
function checkFieldAccess(
  entities: readonly EntityModel[],
  sources: EntitySource[],
  roles: readonly RoleModel[],
  diagnostics: Diagnostic[],
): void {
  const known = new Set<string>([
    ...BUILTIN_ROLE_KEYS,
    ...roles.map((role) => role.key),
    ...entities.flatMap((entity) => Object.keys(entity.rolePermissions)),
    OWNER_ROLE,
  ]);
  for (const entity of entities) {
    const source = sources.find((s) => (s.source.data as RawEntity).plural === entity.plural)?.source;
    const raw = source?.data as RawEntity | undefined;
    for (const field of entity.fields) {
      if (!field.access || !source) continue;
      for (const list of ['view', 'edit'] as const)
        (raw?.fields[field.name]?.access?.[list] ?? []).forEach((role, i) => {
          if (!known.has(role))
            diagnostics.push(
              source.diagnostic(
                ['fields', field.name, 'access', list, i],
                `unknown role "${role}"; roles: ${[...known].sort().join(', ')} (a role made through the API gets the permission ${entity.plural}.${field.name}:${list})`,
              ),
            );
        });
    }
  }
}

function checkRelations(entities: EntityModel[], sources: EntitySource[], diagnostics: Diagnostic[]): void {
  const byPlural = new Map(entities.map((e) => [e.plural, e]));
  for (const entity of entities) {
    for (const relation of entity.relations ?? []) {
      const source = sources.find((s) => (s.source.data as RawEntity).plural === entity.plural)!.source;
      const report = (key: 'entity' | 'field', message: string) =>
        diagnostics.push(source.diagnostic(['relations', relation.name, key], message));
      const target = byPlural.get(relation.entity);
      if (!target) continue; // reported as unknown already
      if (target.internal) {
        report('entity', `${target.plural} is internal: it has no routes to list its records`);
        continue;
      }
      const field = target.fields.find((f) => f.name === relation.field && !f.hidden);
      const ref = field?.type === 'objectId' ? field.ref : field?.type === 'array' ? field.items?.ref : undefined;
      if (ref !== entity.plural || (field?.type === 'array' && field.items?.type !== 'objectId')) {
        const candidates = target.fields
          .filter(
            (f) => (f.type === 'objectId' ? f.ref : f.items?.type === 'objectId' ? f.items.ref : '') === entity.plural,
          )
          .map((f) => f.name);
        report(
          'field',
          `${target.plural}.${relation.field} is not a reference to ${entity.plural}` +
            (candidates.length > 0 ? `; its references to ${entity.plural}: ${candidates.join(', ')}` : ''),
        );
      }
    }
  }
}
