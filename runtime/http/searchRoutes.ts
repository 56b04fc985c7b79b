import type { Router } from 'express';
import { features } from '../api/index.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { searchOperation } from '../entities/search.js';
import { DeclaredRouter } from './declaredRouter.js';

export const SEARCH_PATH = features.search.path;

/** GET /api/v1/search?q=&limit= (feature `search`): `{ data: { items: [{ entity, id, title, snippet }], totalCount } }`. */
export function searchRoutes(ctx: RuntimeContext): Router {
  return new DeclaredRouter(SEARCH_PATH).json(features.search, async ({ caller, query }) => ({
    data: await searchOperation(ctx, caller, query.q, query.limit ?? 20),
  })).router;
}
