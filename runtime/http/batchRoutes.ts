import type { Router } from 'express';
import { features } from '../api/index.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { batchOperation } from '../entities/batch.js';
import { DeclaredRouter } from './declaredRouter.js';
import { changeReason } from './entityRoutes.js';
import { requestContext } from './requestTrace.js';

export const BATCH_PATH = features.batch.path;

/** POST /api/v1/batch: `{ operations: [...] }` -> `{ data: { results: [{ status, body }] } }`, all or nothing. */
export function batchRoutes(ctx: RuntimeContext): Router {
  return new DeclaredRouter(BATCH_PATH).json(features.batch, async ({ req, caller, body }) => ({
    data: await batchOperation(requestContext(ctx, req), caller, body.operations, changeReason(req)),
  })).router;
}
