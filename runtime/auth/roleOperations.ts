import { BUILTIN_ROLE_KEYS, builtinRoleId, type RoleDefinition } from '../access/builtinRoles.js';
import { requireAdmin } from '../access/guards.js';
import { API_ACCESS, customActionsOf, SYSTEM_ADMIN } from '../access/parsePermission.js';
import { permissionProblem } from '../access/permissionCondition.js';
import { ADMIN } from '../access/roleTable.js';
import type { Caller } from '../context/caller.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { ROLES } from '../model/collections.js';
import type { AppModel } from '../model/types.js';
import { newId } from '../write/prepareWrite.js';
import type { AuthContext } from './authContext.js';

/** A new role: what POST /roles reads. */
export interface RoleInput {
  key: string;
  label: string;
  description?: string | null;
  permissions: string[];
  isSystem?: boolean;
}

/** A change of a role: what PUT /roles/{key} reads. */
export type RoleChange = Partial<Omit<RoleInput, 'key'>>;

const ROLE_KEY = /^[A-Z][A-Z0-9_]{0,63}$/;

/** The role editor's list: every permission string the model understands, explained. */
export function availablePermissions(auth: AuthContext, caller: Caller) {
  requireAdmin(caller);
  const model = auth.ctx.registry.model;
  const list = [
    {
      key: SYSTEM_ADMIN,
      entity: 'system',
      action: 'admin',
      scope: '',
      label: 'Administrator',
      description: 'Grants everything and bypasses every check',
    },
    {
      key: API_ACCESS,
      entity: 'api',
      action: 'access',
      scope: '',
      label: 'API access',
      description: 'Marks programmatic access; gates nothing by itself',
    },
  ];
  for (const entity of model.entities.filter((e) => !e.internal)) {
    for (const key of entity.availablePermissions) {
      const [subject, action, scope = ''] = key.split(':');
      const noun = entity.label.toLowerCase();
      // `employees.salary:view`: a field's own permission.
      const field = subject.includes('.') ? subject.slice(subject.indexOf('.') + 1) : undefined;
      const whose = field
        ? `the ${field} of ${noun} records`
        : scope === 'own'
          ? `own ${noun}`
          : scope === 'all'
            ? `all ${noun}`
            : noun;
      list.push({
        key,
        entity: entity.plural,
        action,
        scope,
        label: `${action} ${whose}`,
        description: `May ${action} ${whose}`,
      });
    }
  }
  return list;
}

/** Every role, built-in and stored, by key. */
export async function listRoles(auth: AuthContext, caller: Caller): Promise<RoleDefinition[]> {
  requireAdmin(caller);
  return [...(await auth.roles.all()).values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

export async function createRole(auth: AuthContext, caller: Caller, input: RoleInput): Promise<RoleDefinition> {
  requireAdmin(caller);
  const { key } = input;
  const details = {
    ...(ROLE_KEY.test(key) ? {} : { key: 'must be upper case: letters, digits and _' }),
    ...checkPermissions(auth.ctx.registry.model, input.permissions),
  };
  if (Object.keys(details).length > 0) throw validationError(details);
  keepAdminWhole(key, input.permissions);
  if (await storedRole(auth, key))
    throw new ApiError('CONFLICT', `Role ${key} already exists`, { key: 'already exists' });
  const now = auth.ctx.now().toISOString();
  await auth.ctx.store.insert(ROLES, {
    id: await roleId(auth, key),
    key,
    label: input.label,
    description: input.description ?? null,
    permissions: [...new Set(input.permissions)],
    isSystem: input.isSystem ?? false,
    createdAt: now,
    updatedAt: now,
  });
  return roleView(auth, key);
}

/** Changes a stored role; changing a built-in or file role stores an override of it. */
export async function updateRole(
  auth: AuthContext,
  caller: Caller,
  key: string,
  change: RoleChange,
): Promise<RoleDefinition> {
  requireAdmin(caller);
  if (change.permissions) {
    const details = checkPermissions(auth.ctx.registry.model, change.permissions);
    if (Object.keys(details).length > 0) throw validationError(details);
    keepAdminWhole(key, change.permissions);
  }
  const now = auth.ctx.now().toISOString();
  const stored = await storedRole(auth, key);
  const changes = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined));
  if (stored) await auth.ctx.store.update(ROLES, stored.id, { ...changes, updatedAt: now });
  else {
    const builtin = (await auth.roles.all()).get(key);
    if (!builtin || builtin.origin === 'stored') throw notFound(`Role ${key}`);
    await auth.ctx.store.insert(ROLES, {
      id: await roleId(auth, key),
      key,
      label: builtin.label,
      description: builtin.description ?? null,
      permissions: builtin.permissions,
      isSystem: builtin.isSystem,
      ...changes,
      createdAt: now,
      updatedAt: now,
    });
  }
  return roleView(auth, key);
}

/** Deletes a stored role; an override of a built-in or file role falls back to that definition. */
export async function deleteRole(
  auth: AuthContext,
  caller: Caller,
  key: string,
): Promise<{ key: string; deleted: true }> {
  requireAdmin(caller);
  const stored = await storedRole(auth, key);
  if (!stored) {
    const origin = (await auth.roles.all()).get(key)?.origin;
    if (origin === 'builtin') {
      throw new ApiError(
        'UNPROCESSABLE_ENTITY',
        `Built-in role ${key} is defined in code and cannot be deleted; override it instead`,
      );
    }
    if (origin === 'file') {
      throw new ApiError(
        'UNPROCESSABLE_ENTITY',
        `Role ${key} is declared in the app's files (entigen.config.yaml or an entity file); remove it there, or override it`,
      );
    }
    throw notFound(`Role ${key}`);
  }
  await auth.ctx.store.remove(ROLES, stored.id);
  auth.roles.invalidate();
  return { key, deleted: true };
}

async function storedRole(auth: AuthContext, key: string) {
  const [stored] = await auth.ctx.store.find(ROLES, { where: { field: 'key', op: 'eq', value: key }, limit: 1 });
  return stored;
}

/** The role as the role table now has it, after a write. */
async function roleView(auth: AuthContext, key: string): Promise<RoleDefinition> {
  auth.roles.invalidate();
  return (await auth.roles.all()).get(key)!;
}

/** A stored override of a built-in or file role keeps that role's id; other roles get a new one. */
async function roleId(auth: AuthContext, key: string): Promise<string> {
  if ((BUILTIN_ROLE_KEYS as readonly string[]).includes(key)) return builtinRoleId(key);
  return (await auth.roles.all()).get(key)?.origin === 'file' ? builtinRoleId(key) : newId();
}

/** ADMIN's system:admin cannot be taken away: that would lock every administrator out. */
function keepAdminWhole(key: string, permissions: string[]): void {
  if (key === ADMIN && !permissions.includes(SYSTEM_ADMIN)) {
    throw new ApiError('UNPROCESSABLE_ENTITY', 'The ADMIN role always holds system:admin', {
      permissions: 'must include system:admin for the ADMIN role',
    });
  }
}

function checkPermissions(model: AppModel, permissions: string[]): Record<string, string> {
  const details: Record<string, string> = {};
  const customActions = customActionsOf(model);
  permissions.forEach((text, i) => {
    const problem = permissionProblem(text, model.entities, customActions);
    if (problem) details[`permissions.${i}`] = `"${text}": ${problem}`;
  });
  return details;
}
