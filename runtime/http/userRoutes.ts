import { Router } from 'express';
import type { AuthContext } from '../auth/authContext.js';
import { openSealedValue, sealValue } from '../crypto/signedToken.js';
import type { Doc } from '../store/types.js';
import { MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE } from '../query/listQuery.js';
import { ApiError, notFound, validationError } from '../errors/apiError.js';
import { requireAdmin, requirePermission, requireUser } from './guards.js';
import { ACCOUNT_EDIT } from '../access/accountPermissions.js';
import { readBody } from './readBody.js';
import { USERS } from '../model/collections.js';

/** A user as the user endpoints show it: never a password hash. */
export function userView(user: Doc) {
  return {
    id: user.id,
    email: user.email,
    displayName: user.displayName,
    roles: user.roles ?? [],
    authSource: user.authSource,
    ldapDn: user.ldapDn ?? null,
    disabled: user.disabled === true,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
    lastLoginAt: user.lastLoginAt ?? null,
  };
}

/** /api/v1/users: GET (admin, limit + cursor) and PUT /{id} (admin; or yourself for displayName). Bare bodies. */
export function userRoutes(auth: AuthContext): Router {
  const router = Router();
  const { store } = auth.ctx;

  router.get('/', async (req, res) => {
    requireAdmin(req.caller);
    const query = req.query as Record<string, unknown>;
    for (const key of Object.keys(query)) if (key !== 'limit' && key !== 'cursor') throw validationError({ [key]: 'is not a known query parameter' });
    const limitText = query.limit;
    const limit = limitText === undefined ? DEFAULT_PAGE_SIZE : Number(limitText);
    if (typeof limitText === 'object' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
      throw validationError({ limit: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
    }
    let after: string | undefined;
    if (query.cursor !== undefined) {
      const opened = typeof query.cursor === 'string' ? (openSealedValue(auth.ctx.secrets.signing, query.cursor) as { u?: unknown } | undefined) : undefined;
      if (typeof opened?.u !== 'string') throw validationError({ cursor: 'is not a valid cursor' });
      after = opened.u;
    }
    const found = await store.find(USERS, { sort: [{ field: 'id', direction: 'asc' }], after, limit: limit + 1 });
    const items = found.slice(0, limit).map(userView);
    res.json({ items, ...(found.length > limit ? { nextCursor: sealValue(auth.ctx.secrets.signing, { u: items.at(-1)!.id }) } : {}) });
  });

  router.put('/:id', async (req, res) => {
    const me = requireUser(req.caller);
    const id = String(req.params.id);
    const body = readBody(req.body, {
      displayName: { type: 'string', min: 1, max: 200 },
      roles: { type: 'stringArray', maxItems: 50 },
      disabled: { type: 'boolean' },
      authSource: { type: 'enum', values: ['local', 'ldap'] },
      ldapDn: { type: 'string', min: 1, max: 1000 },
    });
    if (!req.caller.isAdmin) {
      if (id !== me.id) throw new ApiError('FORBIDDEN', 'You may change only your own account');
      requirePermission(req.caller, ACCOUNT_EDIT);
      if (body.roles !== undefined || body.disabled !== undefined || body.authSource !== undefined || body.ldapDn !== undefined) {
        throw new ApiError('FORBIDDEN', 'Only administrators change roles, sign-in sources or disable accounts');
      }
    }
    const user = /^[0-9a-f]{24}$/.test(id) ? await store.get(USERS, id) : null;
    if (!user) throw notFound('User');
    const set: Record<string, unknown> = { updatedAt: auth.ctx.now().toISOString() };
    if (body.displayName !== undefined) set.displayName = (body.displayName as string).trim();
    if (body.disabled !== undefined) set.disabled = body.disabled;
    Object.assign(set, await signInSourceChange(auth, user, body));
    if (body.roles !== undefined) {
      const roles = [...new Set(body.roles as string[])];
      const known = await auth.roles.all();
      const unknown = roles.filter((key) => !known.has(key));
      if (unknown.length > 0) throw validationError({ roles: `unknown role ${unknown.join(', ')}` });
      set.roles = roles;
    }
    if (((user.roles as string[]) ?? []).includes('ADMIN') && (set.disabled === true || (set.roles && !(set.roles as string[]).includes('ADMIN')))) {
      const admins = await store.count(USERS, { where: { and: [{ field: 'roles', op: 'contains', value: ['ADMIN'] }, { field: 'disabled', op: 'ne', value: true }] } });
      if (admins <= 1) throw new ApiError('UNPROCESSABLE_ENTITY', 'The last administrator cannot lose the ADMIN role or be disabled');
    }
    res.json(userView((await store.update(USERS, id, set))!));
  });
  return router;
}

/**
 * An admin links an account to LDAP (`authSource: ldap`, optionally the entry's `ldapDn`; its
 * password is removed, LDAP is then its only way in) or back to a local password account
 * (which then needs a password reset).
 */
async function signInSourceChange(auth: AuthContext, user: Doc, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const source = (body.authSource as string | undefined) ?? (user.authSource as string);
  if (source === 'local') {
    if (body.ldapDn !== undefined) throw validationError({ ldapDn: 'is only for accounts that sign in through LDAP' });
    return body.authSource === 'local' ? { authSource: 'local', ldapDn: null } : {};
  }
  if (body.authSource === undefined && body.ldapDn === undefined) return {};
  const ldapDn = (body.ldapDn as string | undefined)?.trim() ?? (body.authSource === 'ldap' && user.authSource === 'ldap' ? user.ldapDn : null) ?? null;
  if (ldapDn) {
    const [holder] = await auth.ctx.store.find(USERS, { where: { field: 'ldapDn', op: 'eq', value: ldapDn }, limit: 1 });
    if (holder && holder.id !== user.id) throw new ApiError('CONFLICT', 'Another account is linked to this LDAP entry', { ldapDn: 'is linked to another account' });
  }
  return { authSource: 'ldap', ldapDn, passwordHash: null };
}
