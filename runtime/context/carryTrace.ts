import { carryTrace } from '../store/tracedStore.js';
import type { Context } from '../telemetry/tracing.js';
import type { RuntimeContext } from './runtimeContext.js';

/**
 * `ctx` for the work beneath a span (a request, a hook, an endpoint's handler, a job run): its
 * store carries the span, so the database calls made through it are the span's children. The
 * same `ctx` outside a trace, which is every request when tracing is off.
 */
export function contextInTrace(ctx: RuntimeContext, trace: Context | undefined): RuntimeContext {
  return trace === undefined ? ctx : { ...ctx, store: carryTrace(ctx.store, trace) };
}
