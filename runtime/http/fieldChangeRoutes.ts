import type { Router } from 'express';
import { requireAdmin, requireUser } from '../access/guards.js';
import type { RuntimeContext } from '../context.js';
import { validationError } from '../errors/apiError.js';
import { FIELD_CHANGE_STATUSES, listAllFieldChanges } from '../history/historyOperations.js';
import { historyPage } from './entityRoutes.js';
import { exactRouter } from './exactRouter.js';

export const FIELD_CHANGES_PATH = '/field-changes';

/** GET /api/v1/field-changes: the approvals queue across entities (admins); `entity`, `approvalStatus`, `limit`, `cursor`. */
export function fieldChangeRoutes(ctx: RuntimeContext): Router {
  const router = exactRouter();
  router.get('/', async (req, res) => {
    requireUser(req.caller);
    requireAdmin(req.caller);
    const page = historyPage(ctx, req, 'string', ['entity', 'approvalStatus']);
    const { entity, approvalStatus } = req.query;
    const problems: Record<string, string> = {};
    const model = typeof entity === 'string' ? ctx.registry.entities.get(entity)?.model : undefined;
    if (entity !== undefined && (!model || model.internal || !model.fields.some((f) => f.trackChanges)))
      problems.entity = 'must name an entity with tracked fields';
    if (
      approvalStatus !== undefined &&
      !FIELD_CHANGE_STATUSES.includes(approvalStatus as (typeof FIELD_CHANGE_STATUSES)[number])
    )
      problems.approvalStatus = `must be one of ${FIELD_CHANGE_STATUSES.join(', ')}`;
    if (Object.keys(problems).length > 0) throw validationError(problems, 'Invalid query parameters');
    res.json(
      await listAllFieldChanges(
        ctx,
        req.caller,
        {
          entity: model?.plural,
          approvalStatus: approvalStatus as (typeof FIELD_CHANGE_STATUSES)[number] | undefined,
        },
        page,
      ),
    );
  });
  return router;
}
