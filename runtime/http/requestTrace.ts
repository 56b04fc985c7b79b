import type { IncomingMessage } from 'node:http';
import type { AuthContext } from '../auth/authContext.js';
import { contextInTrace } from '../context/carryTrace.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { type Context, type Span, traceFields } from '../telemetry/tracing.js';

/**
 * A traced request's server span and its context, kept on the request itself: a sampled span, or
 * one left out in a caller's trace (it records nothing; its ids carry the caller's decision on).
 */
interface RequestTrace {
  span: Span;
  context: Context;
  /**
   * Ends the server span once the answer is done, until something claims it: the request log,
   * which listens for the end of every request anyway, so a traced request adds no listener.
   */
  end: (() => void) | undefined;
}

/**
 * The request as tracing sees it. Every request of a traced server gets the property, sampled or
 * not, so all requests keep one shape (a WeakMap per request costs the collector more).
 */
type TracedRequest = IncomingMessage & { entigenTrace?: RequestTrace };

/**
 * Marks a request sampled (its server span, that span's context, and what ends the span), or
 * traced but not sampled (traceRequests.ts).
 */
export function traceRequest(req: IncomingMessage, span: Span | undefined, context?: Context, end?: () => void): void {
  (req as TracedRequest).entigenTrace = span && context ? { span, context, end } : undefined;
}

/**
 * What ends a sampled request's server span, for the one listener that waits for the request's
 * end (the request log's) to call; undefined once claimed, and for a request not sampled.
 */
export function claimSpanEnd(req: IncomingMessage): (() => void) | undefined {
  const trace = (req as TracedRequest).entigenTrace;
  if (trace === undefined) return undefined;
  const end = trace.end;
  trace.end = undefined;
  return end;
}

/** The server span of a traced request. */
export function requestSpan(req: IncomingMessage): Span | undefined {
  return (req as TracedRequest).entigenTrace?.span;
}

/** The server span's context of a traced request, for what the request starts (a job run links to it). */
export function requestTrace(req: IncomingMessage): Context | undefined {
  return (req as TracedRequest).entigenTrace?.context;
}

/**
 * The runtime context a request's handler works with: in a trace, one whose store carries the
 * request's server span, so its database calls, access rules and hooks are the
 * span's children; otherwise `ctx` itself.
 */
export function requestContext(ctx: RuntimeContext, req: IncomingMessage): RuntimeContext {
  return contextInTrace(ctx, requestTrace(req));
}

/** The identity endpoints' context for one request, as requestContext. */
export function requestAuth(auth: AuthContext, req: IncomingMessage): AuthContext {
  const trace = requestTrace(req);
  return trace === undefined ? auth : { ...auth, ctx: contextInTrace(auth.ctx, trace) };
}

/** `trace_id` and `span_id` of a request's server span, for its log lines; undefined without tracing. */
export function requestTraceFields(req: IncomingMessage): { trace_id: string; span_id: string } | undefined {
  const span = requestSpan(req);
  return span ? traceFields(span) : undefined;
}
