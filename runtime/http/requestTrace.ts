import type { IncomingMessage } from 'node:http';
import type { AuthContext } from '../auth/authContext.js';
import { contextInTrace } from '../context/carryTrace.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { type Context, type Span, traceFields } from '../telemetry/tracing.js';

/** The server span of each sampled request in flight, and its context (the request log, the error handler and the handlers use them). */
const spans = new WeakMap<IncomingMessage, Span>();
const contexts = new WeakMap<IncomingMessage, Context>();

/** Marks a request sampled, with its server span and that span's context (traceRequests.ts). */
export function traceRequest(req: IncomingMessage, span: Span, context: Context): void {
  spans.set(req, span);
  contexts.set(req, context);
}

/** The server span of a sampled request. */
export function requestSpan(req: IncomingMessage): Span | undefined {
  return spans.get(req);
}

/** The server span's context of a sampled request, for what the request starts (a job run links to it). */
export function requestTrace(req: IncomingMessage): Context | undefined {
  return contexts.get(req);
}

/**
 * The runtime context a request's handler works with: in a sampled trace, one whose store
 * carries the request's server span, so its database calls, access rules and hooks are the
 * span's children; otherwise `ctx` itself.
 */
export function requestContext(ctx: RuntimeContext, req: IncomingMessage): RuntimeContext {
  return contextInTrace(ctx, contexts.get(req));
}

/** The identity endpoints' context for one request, as requestContext. */
export function requestAuth(auth: AuthContext, req: IncomingMessage): AuthContext {
  const trace = contexts.get(req);
  return trace === undefined ? auth : { ...auth, ctx: contextInTrace(auth.ctx, trace) };
}

/** `trace_id` and `span_id` of a request's server span, for its log lines; undefined without tracing. */
export function requestTraceFields(req: IncomingMessage): { trace_id: string; span_id: string } | undefined {
  const span = spans.get(req);
  return span ? traceFields(span) : undefined;
}
