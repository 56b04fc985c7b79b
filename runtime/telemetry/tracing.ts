import {
  type Attributes,
  type Context,
  type ContextManager,
  createContextKey,
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';

export type { Attributes, Context, Link, Span, SpanContext };
export { ROOT_CONTEXT, SpanKind };

/**
 * OpenTelemetry traces, as the code that makes spans sees them: the API alone (the SDK is loaded
 * by startTracing.ts, and only when an exporter is configured). Until `enableTracing` runs every
 * helper here is a plain call of its function, so a server without tracing pays one boolean test.
 *
 * A trace is carried explicitly, not by AsyncLocalStorage: on Node 20 that turns on a hook for
 * every promise of the process once a context is entered, some 15 to 30 µs a request whether it
 * is sampled or not. The active context below lasts for the synchronous run of a function; what
 * runs after an await finds its span through the store it was handed (store/tracedStore.ts).
 */
let tracer: Tracer | undefined;
/** The context manager the SDK registered, held directly: the API's global look-up costs a request each time. */
let manager: SyncContextManager | undefined;
/**
 * Whether a new trace is sampled, asked before the SDK makes a span (startTracing.ts): a request
 * the sampler leaves out then costs one decision, not a span that records nothing. Without it
 * (a provider of a test's own) the SDK's sampler decides inside `startSpan`.
 */
export type RootSampler = () => boolean;
let sampleRoot: RootSampler | undefined;

/**
 * A context active while a function runs synchronously (and while a bound function does): a
 * stack, with nothing of async_hooks. Enough for a span's own statements before its first await;
 * the rest is carried by hand.
 */
export class SyncContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  /** `fn()` with `context` active: `with` without its arguments, for the calls made on every traced request. */
  run<T>(context: Context, fn: () => T): T {
    const previous = this.current;
    this.current = context;
    try {
      return fn();
    } finally {
      this.current = previous;
    }
  }

  /** `fn(span, context)` with `context` active: `run` without a closure, for each span's function. */
  runSpan<T>(context: Context, fn: (span: Span | undefined, context: Context) => T, span: Span | undefined): T {
    const previous = this.current;
    this.current = context;
    try {
      return fn(span, context);
    } finally {
      this.current = previous;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const manager = this;
    return function bound(this: unknown, ...args: unknown[]) {
      return manager.with(context, () => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}

/** The key the API keeps a context's span under (`trace.getSpan` reads it): `createContextKey` gives the same symbol for the same name. */
const SPAN_KEY = createContextKey('OpenTelemetry Context Key SPAN');

/**
 * A context of one more value over its parent, read through to the parent: what a span's context
 * is. The API's own context copies its parent's map and makes three functions for each one.
 */
class ValueContext implements Context {
  constructor(
    private readonly parent: Context,
    private readonly key: symbol,
    /** DELETED when the key is taken away here. */
    private readonly value: unknown,
  ) {}

  getValue(key: symbol): unknown {
    if (key !== this.key) return this.parent.getValue(key);
    return this.value === DELETED ? undefined : this.value;
  }

  setValue(key: symbol, value: unknown): Context {
    return new ValueContext(this, key, value);
  }

  deleteValue(key: symbol): Context {
    return new ValueContext(this, key, DELETED);
  }
}

const DELETED = Symbol('deleted');

/** Whether the API finds a span where ValueContext puts it; checked once, else `trace.setSpan` does it. */
let spanKeyHolds: boolean | undefined;

/** `parent` with `span` as its span, as `trace.setSpan` makes it. */
function withSpan(parent: Context, span: Span): Context {
  spanKeyHolds ??= trace.getSpan(new ValueContext(ROOT_CONTEXT, SPAN_KEY, span)) === span;
  return spanKeyHolds ? new ValueContext(parent, SPAN_KEY, span) : trace.setSpan(parent, span);
}

/** Whether spans are being made (an exporter was configured at start). */
export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** Whether `context` belongs to a sampled trace: only then does work beneath it make spans. */
export function inTrace(context: Context | undefined): context is Context {
  return context !== undefined && trace.getSpan(context) !== undefined;
}

/** Called once the SDK is registered as the global tracer provider (or with a provider of its own), with its context manager. */
export function enableTracing(
  name: string,
  version: string,
  contextManager: SyncContextManager,
  provider?: TracerProvider,
  rootSampler?: RootSampler,
): void {
  tracer = provider ? provider.getTracer(name, version) : trace.getTracer(name, version);
  manager = contextManager;
  sampleRoot = rootSampler;
}

/** For tests and a server's way down: spans are made no more. */
export function disableTracing(): void {
  tracer = undefined;
  manager = undefined;
  sampleRoot = undefined;
}

/** Whether a new trace about to start is sampled (the SDK decides when nothing asks first). */
function newTraceKept(): boolean {
  return sampleRoot === undefined || sampleRoot();
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
export function inSpan<T>(name: string, options: SpanOptions, fn: (span?: Span, context?: Context) => T): T {
  if (tracer === undefined || manager === undefined) return fn(undefined);
  const parent = options.root ? ROOT_CONTEXT : (options.parent ?? manager.active());
  if (options.root) {
    if (!newTraceKept()) return fn(undefined);
  } else {
    const parentSpan = trace.getSpan(parent);
    // Work outside every trace (a poll, a lease's renewal) makes no span: it would be a trace of one.
    if (parentSpan === undefined) return fn(undefined);
    // Beneath a span of this process the sampler left out nothing is recorded, whatever the
    // sampler: its trace, its ids and its decision go on as they are.
    if (leftOut(parentSpan)) return manager.runSpan(parent, fn, undefined);
  }
  // The options are the API's own (kind, attributes, links, root; a kind left out is INTERNAL).
  const span = tracer.startSpan(name, options, parent);
  if (!span.isRecording()) {
    // A trace the sampler left out (a caller's traceparent flagged so): what runs beneath records
    // nothing, but gets the ids to pass on, so the work it causes keeps the caller's decision.
    if (!isSpanContextValid(span.spanContext())) return fn(undefined);
    return manager.runSpan(withSpan(parent, span), fn, undefined);
  }
  const active = withSpan(parent, span);
  let result: T;
  try {
    result = manager.runSpan(active, fn, span);
  } catch (error) {
    failSpan(span, error);
    span.end();
    throw error;
  }
  if (result instanceof Promise) {
    // The span ends as the promise settles, before whoever awaits it goes on; the caller gets the
    // promise itself (and its rejection), with no promise of ours between.
    result.then(
      () => span.end(),
      (error) => {
        failSpan(span, error);
        span.end();
      },
    );
    return result;
  }
  span.end();
  return result;
}

/**
 * Starts a span the caller ends (a request's, which ends with its answer), and the context that
 * holds it; undefined without tracing, and for a span the sampler left out (nothing beneath it
 * makes a span, so it needs no context).
 */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } | undefined {
  if (tracer === undefined || manager === undefined) return undefined;
  const parent = options.parent ?? manager.active();
  if (trace.getSpanContext(parent) === undefined && !newTraceKept()) return undefined;
  const span = tracer.startSpan(name, options, parent);
  // A span left out in a caller's trace is returned too: it records nothing, and its ids carry the
  // caller's decision to the work the request causes (a webhook's traceparent flagged not sampled).
  if (!span.isRecording() && !isSpanContextValid(span.spanContext())) return undefined;
  return { span, context: withSpan(parent, span) };
}

/** The API's class of spans that only carry ids: a caller's, or one the sampler left out. */
const IDS_ONLY = trace.wrapSpanContext({ traceId: '', spanId: '', traceFlags: TraceFlags.NONE }).constructor;

/**
 * Whether `span` is one of this process's spans the sampler left out (not a caller's, whose flags
 * the sampler reads). A recorded span is told by its class alone: its ids are written out lazily.
 */
function leftOut(span: Span): boolean {
  return span.constructor === IDS_ONLY && span.spanContext().isRemote !== true;
}

/**
 * Whether `context` holds a span of a sampled trace: a recorded span, told by its class (without
 * writing out its ids), or ids flagged sampled.
 */
function sampledIn(context: Context | undefined): boolean {
  const span = context && trace.getSpan(context);
  if (span === undefined) return false;
  return span.constructor !== IDS_ONLY || (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

/**
 * Runs work done later for a write (an afterCommit hook, a webhook delivery, a mail) in a span of
 * the write's trace, from the traceparent kept with it; a trace of its own when none was kept.
 */
export function continueTrace<T>(
  traceparent: string | null | undefined,
  name: string,
  options: SpanOptions,
  fn: (span?: Span, context?: Context) => T,
): T {
  if (tracer === undefined) return fn(undefined);
  // A traceparent that does not parse (a row written by hand) starts a trace of its own.
  const parent = traceparent ? contextFrom({ traceparent }) : undefined;
  return inSpan(name, parent && trace.getSpanContext(parent) ? { ...options, parent } : { ...options, root: true }, fn);
}

/** Runs `fn` with `ctx` active (what a span's children and log lines see). */
export function withContext<T>(ctx: Context, fn: () => T): T {
  return manager === undefined ? fn() : manager.run(ctx, fn);
}

/**
 * The context active now (in the synchronous run of a span's function), to run later work in (a
 * queued transaction); undefined outside a trace.
 */
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
  return manager !== undefined && manager.active() !== ROOT_CONTEXT ? manager.with(ROOT_CONTEXT, fn) : fn();
}

/**
 * Runs a commit shared by several transactions (each with its trace, undefined outside one): in a
 * `COMMIT` span of the first traced transaction's trace (with a ratio sampled, the first is often
 * outside any), linked to the other traced ones, counting every transaction it carries. Without a
 * traced member it only runs `fn`, allocating nothing.
 */
export function inGroupCommit<T>(system: string, members: readonly { trace?: Context | undefined }[], fn: () => T): T {
  const lead = members.find((member) => sampledIn(member.trace));
  if (lead === undefined) return fn();
  return inSpan(
    'COMMIT',
    {
      kind: SpanKind.CLIENT,
      parent: lead.trace,
      attributes: {
        'db.system.name': system,
        'db.operation.name': 'COMMIT',
        'entigen.group_commit.transactions': members.length,
      },
      links: linksTo(members.map((member) => (member === lead || !sampledIn(member.trace) ? undefined : member.trace))),
    },
    fn,
  );
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

/** A link to the span `context` holds (a manual job run links to the request that started it). */
export function linkTo(context: Context | undefined): Link[] | undefined {
  const span = context && trace.getSpanContext(context);
  return span ? [{ context: span }] : undefined;
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

/** The W3C traceparent of the span `context` holds, to keep with work done later; undefined without one. */
export function traceparentOf(context: Context | undefined): string | undefined {
  if (!inTrace(context)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context, carrier);
  return carrier.traceparent;
}

/** The context a kept traceparent (or incoming headers) names, to continue that trace. */
export function contextFrom(carrier: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** Adds the `traceparent` (and `tracestate`) of the span `context` holds to outgoing headers. */
export function injectTraceHeaders(headers: Record<string, string>, context: Context | undefined): void {
  if (inTrace(context)) propagation.inject(context, headers);
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
