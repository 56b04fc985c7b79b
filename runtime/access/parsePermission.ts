import { ACTIONS, type Action } from '../model/types.js';

export type Scope = 'own' | 'all';

/** One permission string taken apart: `entity:action[:field:value][:scope]` or `entity:action:@refField`. */
export interface Permission {
  entity: string;
  action: string;
  scope?: Scope;
  condition?: { field: string; value: string };
  /** `@ticket`: holds for records whose `ticket` references a record the caller may view. */
  through?: string;
  /** `employees.salary:view`: a field's own permission (view or edit), for fields under `access:`. */
  field?: string;
}

export type ParseResult = { ok: true; permission: Permission } | { ok: false; reason: string };

/** The wildcard that grants everything. */
export const SYSTEM_ADMIN = 'system:admin';
/** Marks API access; it gates nothing by itself. */
export const API_ACCESS = 'api:access';

const SCOPES: readonly string[] = ['own', 'all'];

export function isAction(text: string): text is Action {
  return (ACTIONS as readonly string[]).includes(text);
}

/** Which actions an entity knows besides the built-in ones (the custom actions of its endpoints). */
export type CustomActions = (entity: string) => readonly string[] | undefined;

/** A custom action's spelling: a lower-case letter, then letters and digits (`approve`, `markPaid`). */
const ACTION_NAME = /^[a-z][A-Za-z0-9]*$/;

/**
 * `customActions` names the actions each entity's endpoints add; without it only view, create,
 * edit and delete parse. `'any'` accepts any well-formed action (for permissions already checked
 * when they were stored, such as a role's).
 */
export function parsePermission(text: string, customActions?: CustomActions | 'any'): ParseResult {
  if (text === SYSTEM_ADMIN || text === API_ACCESS) {
    const [entity, action] = text.split(':');
    return { ok: true, permission: { entity, action } };
  }
  const parts = text.split(':');
  if (parts.some((part) => part.length === 0)) return { ok: false, reason: 'has an empty part' };
  if (parts.length < 2 || parts.length > 5) {
    return {
      ok: false,
      reason:
        'must look like entity:action, entity:action:scope, entity:action:field:value[:scope] or entity:action:@field',
    };
  }
  const [entity, action, ...rest] = parts;
  const dot = entity.indexOf('.');
  if (dot >= 0) {
    const field = entity.slice(dot + 1);
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(entity.slice(0, dot)) || !/^[A-Za-z][A-Za-z0-9_]*$/.test(field))
      return { ok: false, reason: 'a field permission looks like entity.field:view or entity.field:edit' };
    if ((action !== 'view' && action !== 'edit') || rest.length > 0)
      return { ok: false, reason: 'a field permission is entity.field:view or entity.field:edit, nothing more' };
    return { ok: true, permission: { entity: entity.slice(0, dot), action, field } };
  }
  const custom = customActions === 'any' ? undefined : customActions?.(entity);
  const known =
    isAction(action) || (customActions === 'any' ? ACTION_NAME.test(action) : (custom ?? []).includes(action));
  if (!known) {
    return { ok: false, reason: `unknown action "${action}"; actions: ${[...ACTIONS, ...(custom ?? [])].join(', ')}` };
  }
  const permission: Permission = { entity, action };
  if (rest.length === 1 && rest[0].startsWith('@')) {
    const field = rest[0].slice(1);
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(field)) return { ok: false, reason: `"${rest[0]}" must be @ and a field name` };
    permission.through = field;
    return { ok: true, permission };
  }
  if (rest.some((part) => part.startsWith('@')))
    return { ok: false, reason: 'a rule through a reference stands alone: entity:action:@field' };
  if (rest.length === 1 || rest.length === 3) {
    const scope = rest.pop()!;
    if (!SCOPES.includes(scope)) return { ok: false, reason: `unknown scope "${scope}"; scopes: own, all` };
    permission.scope = scope as Scope;
  }
  if (rest.length === 2) permission.condition = { field: rest[0], value: rest[1] };
  return { ok: true, permission };
}

/** The custom actions of a model's entities, for parsePermission. */
export function customActionsOf(model: {
  entities: readonly { plural: string; customActions?: string[] }[];
}): CustomActions {
  return (plural) => model.entities.find((e) => e.plural === plural)?.customActions;
}
