import { Router } from 'express';
import { builtinRoleId, BUILTIN_ROLE_KEYS, type RoleDefinition } from '../access/builtinRoles.js';
import { API_ACCESS, parsePermission, SYSTEM_ADMIN } from '../access/parsePermission.js';
import type { AuthContext } from '../auth/authContext.js';
import { ADMIN } from '../access/roleTable.js';
import { newId } from '../entities/prepareWrite.js';
import type { AppModel } from '../model/types.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { requireAdmin } from './guards.js';
import { readBody } from './readBody.js';
import { ROLES } from '../model/collections.js';

const ROLE_KEY = /^[A-Z][A-Z0-9_]{0,63}$/;

/** The role editor's list: every permission string the model understands, explained. */
export function availablePermissions(model: AppModel) {
  const list = [
    { key: SYSTEM_ADMIN, entity: 'system', action: 'admin', scope: '', label: 'Administrator', description: 'Grants everything and bypasses every check' },
    { key: API_ACCESS, entity: 'api', action: 'access', scope: '', label: 'API access', description: 'Marks programmatic access; gates nothing by itself' },
  ];
  for (const entity of model.entities.filter((e) => !e.internal)) {
    for (const key of entity.availablePermissions) {
      const [, action, scope = ''] = key.split(':');
      const whose = scope === 'own' ? `own ${entity.label.toLowerCase()}` : scope === 'all' ? `all ${entity.label.toLowerCase()}` : entity.label.toLowerCase();
      list.push({ key, entity: entity.plural, action, scope, label: `${action} ${whose}`, description: `May ${action} ${whose}` });
    }
  }
  return list;
}

/** A stored override of a built-in role keeps the built-in's id; other roles get a new one. */
function roleId(key: string): string {
  return (BUILTIN_ROLE_KEYS as readonly string[]).includes(key) ? builtinRoleId(key) : newId();
}

/** ADMIN's system:admin cannot be taken away: that would lock every administrator out. */
function keepAdminWhole(key: string, permissions: unknown): void {
  if (key === ADMIN && Array.isArray(permissions) && !permissions.includes(SYSTEM_ADMIN)) {
    throw new ApiError('UNPROCESSABLE_ENTITY', 'The ADMIN role always holds system:admin', { permissions: 'must include system:admin for the ADMIN role' });
  }
}

function checkPermissions(model: AppModel, permissions: string[]): Record<string, string> {
  const details: Record<string, string> = {};
  permissions.forEach((text, i) => {
    if (text === SYSTEM_ADMIN || text === API_ACCESS) return;
    const parsed = parsePermission(text);
    if (!parsed.ok) details[`permissions.${i}`] = `"${text}": ${parsed.reason}`;
    else if (!model.entities.some((e) => e.plural === parsed.permission.entity)) details[`permissions.${i}`] = `"${text}": unknown entity ${parsed.permission.entity}`;
  });
  return details;
}

/** /api/v1/roles (admin): list, available permissions, create, edit and delete stored roles. Bare bodies. */
export function roleRoutes(auth: AuthContext): Router {
  const router = Router();
  const { store, registry } = auth.ctx;
  const storedRole = async (key: string) => (await store.find(ROLES, { where: { field: 'key', op: 'eq', value: key }, limit: 1 }))[0];
  const view = async (key: string) => (await auth.roles.all()).get(key)!;

  router.use((req, _res, next) => {
    requireAdmin(req.caller);
    next();
  });

  router.get('/', async (_req, res) => {
    const roles = [...(await auth.roles.all()).values()].sort((a, b) => (a.key < b.key ? -1 : 1));
    res.json({ items: roles });
  });

  router.get('/available-permissions', (_req, res) => void res.json(availablePermissions(registry.model)));

  router.post('/', async (req, res) => {
    const body = readBody(req.body, {
      key: { type: 'string', required: true, max: 64 },
      label: { type: 'string', required: true, min: 1, max: 200 },
      description: { type: 'string', max: 2000 },
      permissions: { type: 'stringArray', required: true, maxItems: 1000 },
      isSystem: { type: 'boolean' },
    });
    const key = body.key as string;
    const details = { ...(ROLE_KEY.test(key) ? {} : { key: 'must be upper case: letters, digits and _' }), ...checkPermissions(registry.model, body.permissions as string[]) };
    if (Object.keys(details).length > 0) throw validationError(details);
    keepAdminWhole(key, body.permissions);
    if (await storedRole(key)) throw new ApiError('CONFLICT', `Role ${key} already exists`, { key: 'already exists' });
    const now = auth.ctx.now().toISOString();
    await store.insert(ROLES, {
      id: roleId(key), key, label: body.label, description: body.description ?? null, permissions: [...new Set(body.permissions as string[])],
      isSystem: body.isSystem ?? false, createdAt: now, updatedAt: now,
    });
    auth.roles.invalidate();
    res.status(201).json(await view(key));
  });

  router.put('/:key', async (req, res) => {
    const key = String(req.params.key);
    const body = readBody(req.body, {
      label: { type: 'string', min: 1, max: 200 },
      description: { type: 'string', max: 2000 },
      permissions: { type: 'stringArray', maxItems: 1000 },
      isSystem: { type: 'boolean' },
    });
    if (body.permissions) {
      const details = checkPermissions(registry.model, body.permissions as string[]);
      if (Object.keys(details).length > 0) throw validationError(details);
      keepAdminWhole(key, body.permissions);
    }
    const now = auth.ctx.now().toISOString();
    const stored = await storedRole(key);
    const changes = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    if (stored) await store.update(ROLES, stored.id, { ...changes, updatedAt: now });
    else {
      const builtin: RoleDefinition | undefined = (await auth.roles.all()).get(key);
      if (!builtin?.isBuiltin) throw notFound(`Role ${key}`);
      // Editing a built-in role stores an override of it.
      await store.insert(ROLES, {
        id: roleId(key), key, label: builtin.label, description: builtin.description ?? null, permissions: builtin.permissions, isSystem: builtin.isSystem,
        ...changes, createdAt: now, updatedAt: now,
      });
    }
    auth.roles.invalidate();
    res.json(await view(key));
  });

  router.delete('/:key', async (req, res) => {
    const key = String(req.params.key);
    const stored = await storedRole(key);
    if (!stored) {
      if ((await auth.roles.all()).get(key)?.isBuiltin) throw new ApiError('UNPROCESSABLE_ENTITY', `Built-in role ${key} is defined in code and cannot be deleted; override it instead`);
      throw notFound(`Role ${key}`);
    }
    await store.remove(ROLES, stored.id);
    auth.roles.invalidate();
    res.json({ key, deleted: true });
  });
  return router;
}
