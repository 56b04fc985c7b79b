import type { Router } from 'express';
import { API_KEYS_CREATE } from '../access/accountPermissions.js';
import { requirePermission } from '../access/guards.js';
import { type ApiKeyInput, createApiKey, listApiKeys, revokeApiKey } from '../auth/apiKeyOperations.js';
import type { AuthContext } from '../auth/authContext.js';
import { exactRouter } from './exactRouter.js';
import { markSecretAnswer } from './idempotency.js';
import { readBody } from './readBody.js';

/** /api/v1/apikeys: create (token shown once), list your keys, revoke. `{ data }` bodies. */
export function apiKeyRoutes(auth: AuthContext): Router {
  const router = exactRouter();

  router.post('/', async (req, res) => {
    // 401/403 before any 400 about the body.
    requirePermission(req.caller, API_KEYS_CREATE);
    const body = readBody(req.body, {
      name: { type: 'string', required: true, min: 1, max: 200 },
      permissions: { type: 'stringArray', required: true, maxItems: 500 },
      expiresAt: { type: 'string', required: true, max: 64 },
    });
    const key = await createApiKey(auth, req.caller, body as unknown as ApiKeyInput);
    markSecretAnswer(res);
    res.status(201).json({ data: key });
  });

  router.get('/', async (req, res) => {
    res.json({ data: await listApiKeys(auth, req.caller) });
  });

  router.delete('/:id', async (req, res) => {
    res.json({ data: await revokeApiKey(auth, req.caller, String(req.params.id)) });
  });
  return router;
}
