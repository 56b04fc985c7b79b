import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import {
  contextFrom,
  failSpan,
  failSpanWith,
  ROOT_CONTEXT,
  SpanKind,
  startSpan,
  withContext,
} from '../telemetry/tracing.js';
import type { NodeListener } from './nodeAdapter.js';
import { claimSpanEnd, requestSpan, traceRequest } from './requestTrace.js';
import { routeLabel } from './routeLabel.js';

/**
 * An error a request ends with, on its server span: the exception, with its message only for a
 * client's error (whose status stays unset, as the HTTP conventions say; a 5xx is an error).
 */
export function recordRequestError(req: IncomingMessage, error: unknown, status: number): void {
  const span = requestSpan(req);
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
      // Without a traceparent there is no caller's trace to continue: nothing to parse.
      parent: request.headers.traceparent === undefined ? ROOT_CONTEXT : contextFrom(request.headers),
      attributes: { 'http.request.method': method, 'url.path': path, 'url.scheme': 'http' },
    });
    // A request the sampler left out runs as it would without traces: nothing beneath it makes a span.
    if (!started) {
      traceRequest(request, undefined);
      return listener(request, response);
    }
    const { span } = started;
    if (!span.isRecording()) {
      // A caller's trace the sampler left out: nothing is recorded, and the request's writes keep
      // the caller's ids and decision for what they cause later (deliveries, webhooks, mail).
      traceRequest(request, span, started.context);
      withContext(started.context, () => listener(request, response));
      return;
    }
    traceRequest(request, span, started.context, () => {
      const template = routeTemplate(request, response, routeOf);
      if (template) {
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
    // The request log claims the span's end as it starts (requestLog.ts); a request answered
    // before it gets there has a listener of its own.
    const unclaimed = claimSpanEnd(request);
    if (unclaimed) response.on('close', unclaimed);
  };
}

/** The template of each matched route (`req.route`), with the mount point it was worked out for. */
const byRoute = new WeakMap<object, { base: string; template: string | undefined }>();

/** The route a request matched, as OpenTelemetry spells it; worked out once per route and mount point. */
function routeTemplate(
  request: Request,
  response: Response,
  routeOf: (method: string, path: string) => string | undefined,
): string | undefined {
  const route = request.route as object | undefined;
  if (route === undefined) {
    const label = routeLabel(request, response, routeOf);
    return label ? templateOf(label) : undefined;
  }
  const base: string = response.locals?.mountPath ?? request.baseUrl;
  const known = byRoute.get(route);
  if (known !== undefined && known.base === base) return known.template;
  const label = routeLabel(request, response, routeOf);
  const template = label ? templateOf(label) : undefined;
  byRoute.set(route, { base, template });
  return template;
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
