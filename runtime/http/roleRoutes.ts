import type { Router } from 'express';
import { requireAdmin } from '../access/guards.js';
import type { AuthContext } from '../auth/authContext.js';
import {
  availablePermissions,
  createRole,
  deleteRole,
  listRoles,
  type RoleChange,
  type RoleInput,
  updateRole,
} from '../auth/roleOperations.js';
import { exactRouter } from './exactRouter.js';
import { readBody } from './readBody.js';

/** /api/v1/roles (admin): list, available permissions, create, edit and delete stored roles. Bare bodies. */
export function roleRoutes(auth: AuthContext): Router {
  const router = exactRouter();

  // 401/403 before any 400 about the body.
  router.use((req, _res, next) => {
    requireAdmin(req.caller);
    next();
  });

  router.get('/', async (req, res) => {
    res.json({ items: await listRoles(auth, req.caller) });
  });

  router.get('/available-permissions', (req, res) => void res.json(availablePermissions(auth, req.caller)));

  router.post('/', async (req, res) => {
    const body = readBody(req.body, {
      key: { type: 'string', required: true, max: 64 },
      label: { type: 'string', required: true, min: 1, max: 200 },
      description: { type: 'string', max: 2000 },
      permissions: { type: 'stringArray', required: true, maxItems: 1000 },
      isSystem: { type: 'boolean' },
    });
    res.status(201).json(await createRole(auth, req.caller, body as unknown as RoleInput));
  });

  router.put('/:key', async (req, res) => {
    const body = readBody(req.body, {
      label: { type: 'string', min: 1, max: 200 },
      description: { type: 'string', max: 2000 },
      permissions: { type: 'stringArray', maxItems: 1000 },
      isSystem: { type: 'boolean' },
    });
    res.json(await updateRole(auth, req.caller, String(req.params.key), body as RoleChange));
  });

  router.delete('/:key', async (req, res) => {
    res.json(await deleteRole(auth, req.caller, String(req.params.key)));
  });
  return router;
}
