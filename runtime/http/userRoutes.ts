import type { Router } from 'express';
import { requireAdmin, requireUser } from '../access/guards.js';
import type { AuthContext } from '../auth/authContext.js';
import { resetMfa } from '../auth/mfa.js';
import {
  createAccount,
  listUsers,
  type NewAccount,
  sendPasswordReset,
  type UserChange,
  updateUser,
  userView,
} from '../auth/userOperations.js';
import { validationError } from '../errors/apiError.js';
import { exactRouter } from './exactRouter.js';
import { readBody } from './readBody.js';

/**
 * /api/v1/users: GET (admin, limit + cursor), POST (admin), PUT /{id} (admin; or yourself for
 * displayName), POST /{id}/password-reset and /{id}/mfa/reset (admin). Bare bodies.
 */
export function userRoutes(auth: AuthContext): Router {
  const router = exactRouter();

  router.get('/', async (req, res) => {
    requireAdmin(req.caller);
    const query = req.query as Record<string, unknown>;
    for (const key of Object.keys(query))
      if (key !== 'limit' && key !== 'cursor') throw validationError({ [key]: 'is not a known query parameter' });
    res.json(await listUsers(auth, req.caller, { limit: query.limit, cursor: query.cursor }));
  });

  router.post('/', async (req, res) => {
    requireUser(req.caller);
    requireAdmin(req.caller);
    const body = readBody(req.body, {
      email: { type: 'string', required: true, max: 320 },
      displayName: { type: 'string', required: true, min: 1, max: 200 },
      roles: { type: 'stringArray', maxItems: 50 },
      authSource: { type: 'enum', values: ['local', 'ldap'] },
      ldapDn: { type: 'string', min: 1, max: 1000 },
      password: { type: 'string', max: 1024 },
    });
    // An explicit null is the same as leaving the field out.
    const input = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null));
    res.status(201).json(await createAccount(auth, req.caller, input as unknown as NewAccount));
  });

  // Admins: the account's owner gets the password-reset mail; the token is never in this answer.
  router.post('/:id/password-reset', async (req, res) => {
    await sendPasswordReset(auth, req.caller, String(req.params.id));
    res.status(202).json({ success: true, message: 'A password-reset mail is on its way to the account' });
  });

  router.put('/:id', async (req, res) => {
    requireUser(req.caller);
    const body = readBody(req.body, {
      displayName: { type: 'string', min: 1, max: 200 },
      roles: { type: 'stringArray', maxItems: 50 },
      disabled: { type: 'boolean' },
      authSource: { type: 'enum', values: ['local', 'ldap'] },
      ldapDn: { type: 'string', min: 1, max: 1000 },
    });
    res.json(await updateUser(auth, req.caller, String(req.params.id), body as UserChange));
  });
  // Admins: the account signs in with its password alone again; its owner is told by mail.
  router.post('/:id/mfa/reset', async (req, res) => {
    const user = await resetMfa(auth, req.caller, String(req.params.id));
    res.json(userView(user));
  });
  return router;
}
