import { createHash } from 'node:crypto';
import { type AppModel, BUILTIN_ROLE_KEYS } from '../model/types.js';
import { API_ACCESS, SYSTEM_ADMIN } from './parsePermission.js';

export { BUILTIN_ROLE_KEYS } from '../model/types.js';

/** Where a role comes from: code (the built-ins), the app's files, or the store (the API). */
export type RoleOrigin = 'builtin' | 'file' | 'stored';

export interface RoleDefinition {
  id: string;
  key: string;
  label: string;
  description?: string;
  permissions: string[];
  isSystem: boolean;
  isBuiltin: boolean;
  /** A stored role overriding a built-in or file role is `stored`. */
  origin: RoleOrigin;
}

const DESCRIPTIONS: Record<string, [string, string]> = {
  ADMIN: ['Administrator', 'Grants everything'],
  USER: ['User', 'Views, creates and edits own records'],
  API: ['API', 'Programmatic access'],
  ANONYMOUS: ['Anonymous', 'Callers that are not signed in'],
  MODERATOR: ['Moderator', 'No permissions unless a role definition adds some'],
};

/**
 * The id of a built-in or file role: the same on every instance and every start (24 hex
 * characters, like every id), and kept by a stored override of that role.
 */
export function builtinRoleId(key: string): string {
  return createHash('sha256').update(`entigen:role:${key}`).digest('hex').slice(0, 24);
}

/**
 * The roles that exist without the store: the built-ins (ADMIN, USER, API, ANONYMOUS,
 * MODERATOR) and the roles of the app's files (declared under `roles:` in the config or named
 * in an entity file's `permissions:`), each with the union of what the config and the entity
 * files give it.
 */
export function builtinRoles(model: AppModel): Map<string, RoleDefinition> {
  const granted = new Map<string, Set<string>>();
  const grant = (role: string, permissions: readonly string[]) => {
    const set = granted.get(role) ?? new Set<string>();
    for (const p of permissions) set.add(p);
    granted.set(role, set);
  };
  for (const role of model.roles ?? []) grant(role.key, role.permissions);
  for (const entity of model.entities) {
    for (const [role, permissions] of Object.entries(entity.rolePermissions)) grant(role, permissions);
  }
  const declared = new Map((model.roles ?? []).map((role) => [role.key, role]));
  const roles = new Map<string, RoleDefinition>();
  for (const key of BUILTIN_ROLE_KEYS) {
    const base = key === 'ADMIN' ? [SYSTEM_ADMIN] : key === 'API' ? [API_ACCESS] : [];
    const [label, description] = DESCRIPTIONS[key];
    roles.set(key, {
      id: builtinRoleId(key),
      key,
      label: declared.get(key)?.label ?? label,
      description: declared.get(key)?.description ?? description,
      permissions: [...new Set([...base, ...(granted.get(key) ?? [])])],
      isSystem: true,
      isBuiltin: true,
      origin: 'builtin',
    });
  }
  for (const key of [...granted.keys()].sort()) {
    if (roles.has(key)) continue;
    const role = declared.get(key);
    roles.set(key, {
      id: builtinRoleId(key),
      key,
      label: role?.label ?? key,
      ...(role?.description ? { description: role.description } : {}),
      permissions: [...(granted.get(key) ?? [])],
      isSystem: false,
      isBuiltin: false,
      origin: 'file',
    });
  }
  return roles;
}

/** Permissions that entity files give to role keys other than the built-ins (custom roles). */
export function entityRolePermissions(model: AppModel): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const entity of model.entities) {
    for (const [role, permissions] of Object.entries(entity.rolePermissions)) {
      if ((BUILTIN_ROLE_KEYS as readonly string[]).includes(role)) continue;
      out.set(role, [...(out.get(role) ?? []), ...permissions]);
    }
  }
  return out;
}
