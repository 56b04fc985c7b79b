import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { AuthContext } from '../auth/authContext.js';
import { contextInTrace } from '../context/carryTrace.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import {
  type Context,
  contextFrom,
  failSpan,
  failSpanWith,
  type Span,
  SpanKind,
  startSpan,
  traceFields,
  withContext,
} from '../telemetry/tracing.js';
import type { NodeListener } from './nodeAdapter.js';
import { routeLabel } from './routeLabel.js';

/** The server span of each sampled request in flight, and its context (the request log, the error handler and the handlers use them). */
const spans = new WeakMap<IncomingMessage, Span>();
const contexts = new WeakMap<IncomingMessage, Context>();

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

/**
 * An error a request ends with, on its server span: the exception, with its message only for a
 * client's error (whose status stays unset, as the HTTP conventions say; a 5xx is an error).
 */
export function recordRequestError(req: IncomingMessage, error: unknown, status: number): void {
  const span = spans.get(req);
  if (!span) return;
  if (status >= 500) failSpan(span, error);
  else
    span.addEvent('exception', {
      'exception.type': (error as Error)?.name ?? 'Error',
      'exception.message': error instanceof Error ? error.message : String(error),
    });
}

/**
 * The server's listener with a server span around each request, continuing the caller's trace
 * when it sent a W3C `traceparent`. The span is named `METHOD route` once the route is known
 * (`GET /api/v1/tickets/{id}`), with the HTTP semantic conventions' attributes and the signed-in
 * user's id; never the query string, a header's value, a token or a field's value.
 */
export function traceRequests(
  listener: NodeListener,
  routeOf: (method: string, path: string) => string | undefined,
): NodeListener {
  return function tracedListener(req, res): void {
    const request = req as Request;
    const response = res as Response;
    const method = request.method ?? 'GET';
    const url = request.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const started = startSpan(method, {
      kind: SpanKind.SERVER,
      parent: contextFrom(request.headers),
      attributes: { 'http.request.method': method, 'url.path': path, 'url.scheme': 'http' },
    });
    if (!started) return listener(request, response);
    const { span } = started;
    // A request the sampler left out runs as it would without traces: nothing beneath it makes a span.
    if (!span.isRecording()) return listener(request, response);
    spans.set(request, span);
    contexts.set(request, started.context);
    response.once('close', () => {
      const route = routeLabel(request, response, routeOf);
      if (route) {
        const template = templateOf(route);
        span.updateName(`${method} ${template}`);
        span.setAttribute('http.route', template);
      }
      span.setAttribute('http.response.status_code', response.statusCode);
      const user = request.caller?.user?.id;
      if (user) span.setAttribute('enduser.id', user);
      if (response.statusCode >= 500) failSpanWith(span, `answered ${response.statusCode}`);
      if (!response.writableFinished) span.setAttribute('entigen.aborted', true);
      span.end();
    });
    withContext(started.context, () => listener(request, response));
  };
}

/** Route labels as OpenTelemetry spells them (`:id` as `{id}`), made once per route. */
const templates = new Map<string, string>();

function templateOf(route: string): string {
  let template = templates.get(route);
  if (template === undefined) {
    template = route.replace(/:(\w+)/g, '{$1}');
    // Unmatched paths are labelled by the route table, so the labels are as many as the routes.
    if (templates.size < 10_000) templates.set(route, template);
  }
  return template;
}
