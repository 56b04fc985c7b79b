import type { Router } from 'express';
import { features } from '../api/index.js';
import type { ResponseOf } from '../api/route.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { validationError } from '../errors/apiError.js';
import { listAllFieldChanges } from '../history/historyOperations.js';
import { DeclaredRouter } from './declaredRouter.js';
import { pageOf } from './entityRoutes.js';

export const FIELD_CHANGES_PATH = features.fieldChangeQueue.path;

/** GET /api/v1/field-changes: the approvals queue across entities (admins); `entity`, `approvalStatus`, `limit`, `cursor`. */
export function fieldChangeRoutes(ctx: RuntimeContext): Router {
  return new DeclaredRouter(FIELD_CHANGES_PATH, ctx.registry.model).json(
    features.fieldChangeQueue,
    async ({ caller, query }) => {
      const page = pageOf(ctx, query, 'string');
      const model = query.entity === undefined ? undefined : ctx.registry.entities.get(query.entity)?.model;
      if (query.entity !== undefined && (!model || model.internal || !model.fields.some((f) => f.trackChanges)))
        throw validationError({ entity: 'must name an entity with tracked fields' }, 'Invalid query parameters');
      // Rows as the store keeps them: the FieldChange shape the history operations write.
      return (await listAllFieldChanges(
        ctx,
        caller,
        { entity: model?.plural, approvalStatus: query.approvalStatus },
        page,
      )) as ResponseOf<typeof features.fieldChangeQueue>;
    },
  ).router;
}
