import type { Router } from 'express';
import type { RuntimeContext } from '../context.js';
import { searchOperation } from '../entities/search.js';
import { validationError } from '../errors/apiError.js';
import { exactRouter } from './exactRouter.js';

const MAX_QUERY_LENGTH = 200;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

/** GET /api/v1/search?q=&limit= (feature `search`): `{ data: { items: [{ entity, id, title, snippet }], totalCount } }`. */
export function searchRoutes(ctx: RuntimeContext): Router {
  const router = exactRouter();
  router.get('/', async (req, res) => {
    const details: Record<string, string> = {};
    for (const name of Object.keys(req.query))
      if (name !== 'q' && name !== 'limit') details[name] = 'is not a parameter of search (q, limit)';
    const q = req.query.q;
    if (typeof q !== 'string' || q.trim() === '') details.q = 'is required';
    else if (q.length > MAX_QUERY_LENGTH) details.q = `must be at most ${MAX_QUERY_LENGTH} characters`;
    let limit = DEFAULT_LIMIT;
    if (req.query.limit !== undefined) {
      limit = typeof req.query.limit === 'string' && /^\d+$/.test(req.query.limit) ? Number(req.query.limit) : NaN;
      if (!(limit >= 1 && limit <= MAX_LIMIT)) details.limit = `must be an integer from 1 to ${MAX_LIMIT}`;
    }
    if (Object.keys(details).length > 0) throw validationError(details);
    res.json({ data: await searchOperation(ctx, req.caller, q as string, limit) });
  });
  return router;
}
