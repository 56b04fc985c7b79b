import type { Router } from 'express';
import { requireAdmin } from '../access/guards.js';
import type { RuntimeContext } from '../context.js';
import { notFound } from '../errors/apiError.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { SCHEDULED_JOBS } from '../model/collections.js';
import { exactRouter } from './exactRouter.js';

/** POST /scheduledJobs/{id}/run (admin): starts a run now; 202 with the execution, triggeredBy manual. */
export function jobRoutes(ctx: RuntimeContext, scheduler: Scheduler): Router {
  const router = exactRouter();
  router.post('/:id/run', async (req, res) => {
    requireAdmin(req.caller);
    const id = String(req.params.id);
    const job = /^[0-9a-f]{24}$/.test(id) ? await ctx.store.get(SCHEDULED_JOBS, id) : null;
    if (!job) throw notFound('Scheduled job');
    res.status(202).json({ data: await scheduler.runNow(job, req.caller.user!.id) });
  });
  return router;
}
