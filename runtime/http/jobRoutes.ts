import type { Router } from 'express';
import { features } from '../api/index.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { notFound } from '../errors/apiError.js';
import type { Scheduler } from '../jobs/scheduler.js';
import { SCHEDULED_JOBS } from '../model/collections.js';
import { DeclaredRouter } from './declaredRouter.js';
import { requestTrace } from './requestTrace.js';

export const JOBS_PATH = `/api/v1/${SCHEDULED_JOBS}`;

/** POST /scheduledJobs/{id}/run (admin): starts a run now; 202 with the execution, triggeredBy manual. */
export function jobRoutes(ctx: RuntimeContext, scheduler: Scheduler): Router {
  return new DeclaredRouter(JOBS_PATH).json(features.runJob, async ({ req, caller, params }) => {
    const job = /^[0-9a-f]{24}$/.test(params.id) ? await ctx.store.get(SCHEDULED_JOBS, params.id) : null;
    if (!job) throw notFound('Scheduled job');
    return { data: await scheduler.runNow(job, caller.user!.id, requestTrace(req)) };
  }).router;
}
