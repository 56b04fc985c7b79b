import { Router } from 'express';
import { parsePermission } from '../access/parsePermission.js';
import { maskToken, newApiKeyToken, tokenHash } from '../auth/apiKeyToken.js';
import type { AuthContext } from '../auth/authContext.js';
import { newId } from '../entities/prepareWrite.js';
import type { Doc, Where } from '../store/types.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { requirePermission } from './guards.js';
import { API_KEYS_CREATE, API_KEYS_DELETE, API_KEYS_VIEW } from '../access/accountPermissions.js';
import { readBody } from './readBody.js';
import { markSecretAnswer } from './idempotency.js';
import { parseIsoDate } from '../model/parseIsoDate.js';
import { API_KEYS } from '../model/collections.js';

export const MAX_LIVE_KEYS = 50;

function keyView(key: Doc) {
  return {
    id: key.id,
    name: key.name,
    permissions: key.permissions,
    expiresAt: key.expiresAt,
    lastEight: key.lastEight,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt ?? null,
  };
}

/** /api/v1/apikeys: create (token shown once), list your keys, revoke. `{ data }` bodies. */
export function apiKeyRoutes(auth: AuthContext): Router {
  const router = Router();
  const { store } = auth.ctx;
  const liveKeys = (ownerId: string): Where => ({
    and: [
      { field: 'ownerId', op: 'eq', value: ownerId },
      { field: 'revokedAt', op: 'exists', value: false },
      { field: 'expiresAt', op: 'gt', value: auth.ctx.now().toISOString() },
    ],
  });

  router.post('/', async (req, res) => {
    const user = requirePermission(req.caller, API_KEYS_CREATE);
    const body = readBody(req.body, {
      name: { type: 'string', required: true, min: 1, max: 200 },
      permissions: { type: 'stringArray', required: true, maxItems: 500 },
      expiresAt: { type: 'string', required: true, max: 64 },
    });
    const permissions = [...new Set(body.permissions as string[])];
    const details: Record<string, string> = {};
    permissions.forEach((text, i) => {
      const parsed = parsePermission(text);
      if (!parsed.ok) details[`permissions.${i}`] = `"${text}": ${parsed.reason}`;
    });
    const expiresText = body.expiresAt as string;
    const expires = parseIsoDate(expiresText) ?? Number.NaN;
    if (Number.isNaN(expires)) details.expiresAt = 'must be an ISO 8601 date-time';
    else if (expires <= auth.ctx.now().getTime()) details.expiresAt = 'must be in the future';
    if (Object.keys(details).length > 0) throw validationError(details);
    const beyond = permissions.filter((p) => !req.caller.isAdmin && !req.caller.permissions.has(p));
    if (beyond.length > 0) throw new ApiError('FORBIDDEN', `A key cannot hold permissions you do not have: ${beyond.join(', ')}`);
    // A key that mints a key cannot make one that outlives it.
    const credential = req.caller.credential;
    if (credential?.kind === 'apiKey' && expires > Date.parse(credential.expiresAt)) {
      throw new ApiError('FORBIDDEN', 'A key made with an API key cannot outlive it', { expiresAt: `must not be later than ${credential.expiresAt}, when the API key making this request expires` });
    }
    if ((await store.count(API_KEYS, { where: liveKeys(user.id) })) >= MAX_LIVE_KEYS) {
      throw new ApiError('UNPROCESSABLE_ENTITY', `You already have ${MAX_LIVE_KEYS} live API keys; revoke one first`);
    }
    const token = newApiKeyToken();
    const now = auth.ctx.now().toISOString();
    const key = await store.insert(API_KEYS, {
      id: newId(), ownerId: user.id, name: (body.name as string).trim(), tokenHash: tokenHash(token), lastEight: maskToken(token),
      permissions, expiresAt: new Date(expires).toISOString(), lastUsedAt: null, revokedAt: null, archivedAt: null, createdAt: now, updatedAt: now,
    });
    markSecretAnswer(res);
    res.status(201).json({ data: { id: key.id, name: key.name, token, lastEight: key.lastEight, expiresAt: key.expiresAt, permissions } });
  });

  router.get('/', async (req, res) => {
    const user = requirePermission(req.caller, API_KEYS_VIEW);
    const keys = await store.find(API_KEYS, {
      where: { and: [{ field: 'ownerId', op: 'eq', value: user.id }, { field: 'revokedAt', op: 'exists', value: false }] },
      limit: 500,
    });
    res.json({ data: { items: keys.map(keyView) } });
  });

  router.delete('/:id', async (req, res) => {
    const user = requirePermission(req.caller, API_KEYS_DELETE);
    const id = String(req.params.id);
    const key = /^[0-9a-f]{24}$/.test(id) ? await store.get(API_KEYS, id) : null;
    if (!key || key.revokedAt || (key.ownerId !== user.id && !req.caller.isAdmin)) throw notFound('API key');
    await store.update(API_KEYS, id, { revokedAt: auth.ctx.now().toISOString(), updatedAt: auth.ctx.now().toISOString() });
    res.json({ data: { id, revoked: true } });
  });
  return router;
}
