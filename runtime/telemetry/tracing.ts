import {
  type Attributes,
  type Context,
  type ContextManager,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';

export type { Attributes, Context, Link, Span, SpanContext };
export { SpanKind };

/**
 * OpenTelemetry traces, as the code that makes spans sees them: the API alone (the SDK is loaded
 * by startTracing.ts, and only when an exporter is configured). Until `enableTracing` runs every
 * helper here is a plain call of its function, so a server without tracing pays one boolean test.
 */
let tracer: Tracer | undefined;
/** The context manager the SDK registered, held directly: the API's global look-up costs a request each time. */
let manager: ContextManager | undefined;

/** Whether spans are being made (an exporter was configured at start). */
export function tracingOn(): boolean {
  return tracer !== undefined;
}

/**
 * Whether the code runs inside a sampled trace: only then does a span helper make a span. A
 * request the sampler leaves out runs outside any context, so it pays this test and nothing else.
 */
export function inTrace(): boolean {
  return manager !== undefined && trace.getSpan(manager.active()) !== undefined;
}

/** Called once the SDK is registered as the global tracer provider, with its context manager. */
export function enableTracing(name: string, version: string, contextManager: ContextManager): void {
  tracer = trace.getTracer(name, version);
  manager = contextManager;
}

/** For tests and a server's way down: spans are made no more. */
export function disableTracing(): void {
  tracer = undefined;
  manager = undefined;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent, when it is not the active context (a delivery continues the write's trace). */
  parent?: Context;
  /** A trace of its own (a job run), whatever is active. */
  root?: boolean;
  links?: Link[];
}

/**
 * Runs `fn` in a new span, active for what it calls, and ends the span when `fn` settles: a throw
 * sets the span's status and records the exception (its message alone for a client's error).
 * Without tracing, `fn` runs as it is, given no span.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span?: Span) => T): T {
  if (tracer === undefined || manager === undefined) return fn(undefined);
  const parent = options.root ? ROOT_CONTEXT : (options.parent ?? manager.active());
  // Work outside every trace (a poll, a lease's renewal) makes no span: it would be a trace of one.
  if (!options.root && trace.getSpan(parent) === undefined) return fn(undefined);
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      attributes: options.attributes,
      links: options.links,
      root: options.root,
    },
    parent,
  );
  // A span the sampler left out is not made active: what runs beneath it makes none either.
  if (!span.isRecording()) return fn(undefined);
  const active = trace.setSpan(parent, span);
  let result: T;
  try {
    result = manager.with(active, fn, undefined, span);
  } catch (error) {
    failSpan(span, error);
    span.end();
    throw error;
  }
  if (result instanceof Promise) {
    return result.then(
      (value) => {
        span.end();
        return value;
      },
      (error) => {
        failSpan(span, error);
        span.end();
        throw error;
      },
    ) as T;
  }
  span.end();
  return result;
}

/** Starts a span the caller ends (a request's, which ends with its answer). */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } | undefined {
  if (tracer === undefined || manager === undefined) return undefined;
  const parent = options.parent ?? manager.active();
  const span = tracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * Runs work done later for a write (an afterCommit hook, a webhook delivery, a mail) in a span of
 * the write's trace, from the traceparent kept with it; a trace of its own when none was kept.
 */
export function continueTrace<T>(
  traceparent: string | null | undefined,
  name: string,
  options: SpanOptions,
  fn: (span?: Span) => T,
): T {
  if (tracer === undefined) return fn(undefined);
  // A traceparent that does not parse (a row written by hand) starts a trace of its own.
  const parent = traceparent ? contextFrom({ traceparent }) : undefined;
  return inSpan(name, parent && trace.getSpanContext(parent) ? { ...options, parent } : { ...options, root: true }, fn);
}

/** Runs `fn` with `ctx` active (what a span's children and log lines see). */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return manager === undefined ? fn() : manager.with(ctx, fn);
}

/** The context active now, to run later work in (a queued transaction); undefined outside a trace. */
export function activeContext(): Context | undefined {
  if (manager === undefined) return undefined;
  const active = manager.active();
  return trace.getSpan(active) === undefined ? undefined : active;
}

/**
 * Runs `fn` outside every trace: the work a request wakes (the event log's readers, the mail
 * outbox) serves every request after it too, so it belongs to none of them.
 */
export function detached<T>(fn: () => T): T {
  return inTrace() ? manager!.with(ROOT_CONTEXT, fn) : fn();
}

/** Links to the spans the contexts hold (a group commit's other transactions). */
export function linksTo(contexts: readonly (Context | undefined)[]): Link[] {
  const links: Link[] = [];
  for (const ctx of contexts) {
    const span = ctx && trace.getSpanContext(ctx);
    if (span) links.push({ context: span });
  }
  return links;
}

/** The span active now, if any. */
export function activeSpan(): Span | undefined {
  return manager === undefined ? undefined : trace.getSpan(manager.active());
}

/** The active span's context as a link (a manual job run links to the request that started it). */
export function linkToActive(): Link[] | undefined {
  const span = activeSpan();
  return span ? [{ context: span.spanContext() }] : undefined;
}

/**
 * An error's mark on a span: the status ERROR and an exception event. A client's error (an
 * ApiError below 500, a hook's rejection) is recorded by its name and message only, without the
 * stack of the server's code.
 */
export function failSpan(span: Span, error: unknown): void {
  const status = (error as { status?: unknown } | null)?.status;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof status === 'number' && status < 500) {
    span.addEvent('exception', {
      'exception.type': (error as Error).name ?? 'Error',
      'exception.message': message,
    });
  } else if (error instanceof Error) span.recordException(error);
  else span.recordException(message);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Marks a span failed with a message of its own (a webhook the receiver refused). */
export function failSpanWith(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** The W3C traceparent of the active span, to keep with work done later; undefined without one. */
export function activeTraceparent(): string | undefined {
  const active = activeContext();
  if (active === undefined) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return carrier.traceparent;
}

/** The context a kept traceparent (or incoming headers) names, to continue that trace. */
export function contextFrom(carrier: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** Adds the active span's `traceparent` (and `tracestate`) to outgoing headers. */
export function injectTraceHeaders(headers: Record<string, string>): void {
  const active = activeContext();
  if (active !== undefined) propagation.inject(active, headers);
}

/** `trace_id` and `span_id` of the active span for a log line, or of `span` when given. */
export function traceFields(span?: Span): { trace_id: string; span_id: string } | undefined {
  if (manager === undefined) return undefined;
  const current = span ?? trace.getSpan(manager.active());
  if (!current) return undefined;
  const { traceId, spanId } = current.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** A pino mixin: every log line written while a span is active names it (pino merges into what it returns). */
export function logMixin(): object {
  return traceFields() ?? {};
}
