import {
  type SpanOptions as ApiSpanOptions,
  type Attributes,
  type AttributeValue,
  context as apiContext,
  type Context,
  type Exception,
  type HrTime,
  isSpanContextValid,
  type Link,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  type TraceState,
  trace,
} from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import { DRAWN, drawKeptTrace, hexWord, randomWord, ratioBound, type SamplingPlan } from './sampling.js';

/**
 * Spans recorded by entigen itself: the API's `Span`, holding ids as 32-bit words and times as
 * `performance.now()`, handed to a sink (the OTLP encoder) the moment they end. The SDK's spans
 * cost a traced request three times what entigen's own work on it does (hex ids, time tuples,
 * attribute copies, a queue of finished spans the collector has to carry until the next export).
 */

/** How many attributes, events and links a span keeps (OTEL_SPAN_*_COUNT_LIMIT), and how long a string value may be. */
export interface SpanLimits {
  attributes: number;
  events: number;
  links: number;
  /** Longer string values are cut to this many characters (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT). */
  valueLength: number;
}

/** An instrumentation scope: the tracer's name and version, as spans are grouped in an export. */
export interface Scope {
  name: string;
  version: string | undefined;
}

export interface RecordedEvent {
  name: string;
  attributes: Attributes | undefined;
  /** `performance.now()` time. */
  time: number;
  droppedAttributes: number;
}

export interface RecordedLink {
  context: SpanContext;
  attributes: Attributes | undefined;
}

/** What a span says of its parent, when it has one. */
export interface ParentIds {
  s0: number;
  s1: number;
  remote: boolean;
}

const timeOrigin = performance.timeOrigin;

/** A time of the API's (epoch milliseconds, HrTime, Date, or performance time) as `performance.now()` time. */
export function performanceTime(time: TimeInput | undefined): number {
  if (time === undefined) return performance.now();
  if (typeof time === 'number') return time < timeOrigin ? time : time - timeOrigin;
  if (time instanceof Date) return time.getTime() - timeOrigin;
  const [seconds, nanos] = time as HrTime;
  return seconds * 1000 + nanos / 1e6 - timeOrigin;
}

export class RecordedSpan implements Span {
  /** When it ended (`performance.now()` time), or -1 while it runs. */
  endTime = -1;
  /** A frozen block of attributes shared by many spans (a statement's), until an attribute is set. */
  shared: Attributes | undefined;
  /**
   * The attributes set on the span, keys and values side by side (`key, value, key, value`): a
   * span has a handful, and a list takes them without the object shape changes a record would go through.
   */
  own: (string | AttributeValue)[] | undefined;
  droppedAttributes = 0;
  events: RecordedEvent[] | undefined;
  droppedEvents = 0;
  links: RecordedLink[] | undefined;
  droppedLinks = 0;
  statusCode: SpanStatusCode = SpanStatusCode.UNSET;
  statusMessage: string | undefined;
  private context: SpanContext | undefined;

  constructor(
    private readonly recorder: SpanRecorder,
    readonly scope: Scope,
    public name: string,
    readonly kind: SpanKind,
    /** The trace id's words. */
    readonly t0: number,
    readonly t1: number,
    readonly t2: number,
    readonly t3: number,
    /** The span id's words. */
    readonly s0: number,
    readonly s1: number,
    readonly parent: ParentIds | undefined,
    readonly traceState: TraceState | undefined,
    readonly startTime: number,
    attributes: Attributes | undefined,
    links: Link[] | undefined,
  ) {
    this.own = undefined;
    if (attributes !== undefined && Object.isFrozen(attributes)) this.shared = attributes;
    else {
      this.shared = undefined;
      if (attributes !== undefined) this.setAttributes(attributes);
    }
    if (links !== undefined) this.addLinks(links);
  }

  spanContext(): SpanContext {
    this.context ??= {
      traceId: hexWord(this.t0) + hexWord(this.t1) + hexWord(this.t2) + hexWord(this.t3),
      spanId: hexWord(this.s0) + hexWord(this.s1),
      traceFlags: TraceFlags.SAMPLED,
      traceState: this.traceState,
      isRemote: false,
    };
    return this.context;
  }

  /** The span's attributes as one record (the shared block's and those set). */
  get attributes(): Attributes {
    const attributes: Attributes = { ...this.shared };
    const own = this.own ?? [];
    for (let i = 0; i < own.length; i += 2) attributes[own[i] as string] = own[i + 1] as AttributeValue;
    return attributes;
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (this.endTime >= 0 || key.length === 0 || !isValue(value)) return this;
    const limits = this.recorder.limits;
    let own = this.own;
    if (own === undefined) {
      own = this.own = [];
      // A change to a shared block: the span takes its own copy of the block's attributes first.
      if (this.shared !== undefined) {
        for (const shared in this.shared) own.push(shared, this.shared[shared] as AttributeValue);
        this.shared = undefined;
      }
    }
    const kept = limited(value, limits.valueLength);
    for (let i = 0; i < own.length; i += 2) {
      if (own[i] === key) {
        own[i + 1] = kept;
        return this;
      }
    }
    if (own.length >= limits.attributes * 2) this.droppedAttributes++;
    else own.push(key, kept);
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) {
      if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key] as AttributeValue);
    }
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.endTime >= 0) return this;
    if (this.events === undefined) this.events = [];
    if (this.events.length >= this.recorder.limits.events) {
      this.droppedEvents++;
      return this;
    }
    const givenTime = isTimeInput(attributesOrTime) ? attributesOrTime : time;
    const given = isTimeInput(attributesOrTime) ? undefined : attributesOrTime;
    let attributes: Attributes | undefined;
    let droppedAttributes = 0;
    if (given !== undefined) {
      attributes = {};
      let count = 0;
      for (const key in given) {
        const value = given[key];
        if (!Object.hasOwn(given, key) || !isValue(value)) continue;
        if (count >= this.recorder.limits.attributes) {
          droppedAttributes++;
          continue;
        }
        attributes[key] = limited(value, this.recorder.limits.valueLength);
        count++;
      }
    }
    this.events.push({ name, attributes, time: performanceTime(givenTime), droppedAttributes });
    return this;
  }

  addLink(link: Link): this {
    if (this.endTime >= 0 || !isSpanContextValid(link.context)) return this;
    if (this.links === undefined) this.links = [];
    if (this.links.length >= this.recorder.limits.links) this.droppedLinks++;
    else this.links.push({ context: link.context, attributes: link.attributes });
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  /** As the SDK: OK is final, UNSET changes nothing, and only an error keeps a message. */
  setStatus(status: SpanStatus): this {
    if (this.endTime >= 0 || this.statusCode === SpanStatusCode.OK || status.code === SpanStatusCode.UNSET) return this;
    this.statusCode = status.code;
    this.statusMessage = status.code === SpanStatusCode.ERROR ? status.message : undefined;
    return this;
  }

  updateName(name: string): this {
    if (this.endTime < 0) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.endTime >= 0) return;
    this.endTime = Math.max(performanceTime(endTime), this.startTime);
    this.recorder.sink(this);
  }

  isRecording(): boolean {
    return this.endTime < 0;
  }

  /** An `exception` event as the SDK writes it: type (a code or the name), message and stack. */
  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') attributes['exception.message'] = exception;
    else if (exception) {
      if (exception.code !== undefined) attributes['exception.type'] = String(exception.code);
      else if (exception.name) attributes['exception.type'] = exception.name;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] !== undefined || attributes['exception.message'] !== undefined)
      this.addEvent('exception', attributes, time);
  }
}

function isTimeInput(value: unknown): value is TimeInput {
  return typeof value === 'number' || value instanceof Date || (Array.isArray(value) && value.length === 2);
}

/** An attribute value the API allows: a primitive, or an array of one primitive type (nulls allowed). */
function isValue(value: unknown): value is AttributeValue {
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean') return true;
  if (!Array.isArray(value)) return false;
  let kind: string | undefined;
  for (const item of value) {
    if (item === null || item === undefined) continue;
    const itemType = typeof item;
    if (itemType !== 'string' && itemType !== 'number' && itemType !== 'boolean') return false;
    if (kind === undefined) kind = itemType;
    else if (kind !== itemType) return false;
  }
  return true;
}

/**
 * A value as the span keeps it, within the length limit: a string cut to it; an array copied (the
 * caller may change its own later), each string in it cut, as the SDK does.
 */
function limited(value: AttributeValue, length: number): AttributeValue {
  if (typeof value === 'string') return value.length > length ? value.slice(0, length) : value;
  if (!Array.isArray(value)) return value;
  return value.map((item) =>
    typeof item === 'string' && item.length > length ? item.slice(0, length) : item,
  ) as AttributeValue;
}

/**
 * The tracer provider of recorded spans. New traces are decided as the OpenTelemetry samplers
 * decide them (TraceIdRatioBased on the id's words, parent-based or not); a trace left out makes
 * no span object beyond the API's non-recording one, and `sampleRoot` decides before any.
 */
export class SpanRecorder implements TracerProvider {
  private readonly bound: number;
  private readonly tracers = new Map<string, ScopeTracer>();
  /** Whether `sampleRoot` kept a new trace, whose words (DRAWN) the next root span takes. */
  private decided = false;

  constructor(
    readonly plan: SamplingPlan,
    readonly limits: SpanLimits,
    /** Where each span goes as it ends. */
    readonly sink: (span: RecordedSpan) => void,
  ) {
    this.bound = ratioBound(plan.rootRatio);
  }

  getTracer(name: string, version?: string): Tracer {
    const key = `${name}@${version ?? ''}`;
    let tracer = this.tracers.get(key);
    if (tracer === undefined) {
      tracer = new ScopeTracer(this, { name, version });
      // A tracer per instrumentation scope: a process has a handful.
      if (this.tracers.size < 100) this.tracers.set(key, tracer);
    }
    return tracer;
  }

  /**
   * Whether a new trace is kept, decided before a span is made: a trace left out costs four
   * random words. When it is kept, the next root span takes those words as its trace id.
   */
  sampleRoot(): boolean {
    this.decided = drawKeptTrace(this.bound);
    return this.decided;
  }

  startSpan(scope: Scope, name: string, options: ApiSpanOptions, parentContext: Context): Span {
    const context = options.root ? trace.deleteSpan(parentContext) : parentContext;
    if (isTracingSuppressed(context)) return trace.wrapSpanContext(INVALID_CONTEXT);
    const kind = options.kind ?? SpanKind.INTERNAL;
    const s0 = randomWord();
    const s1 = randomWord() || 1;
    const parentSpan = trace.getSpan(context);
    if (parentSpan instanceof RecordedSpan) {
      // A span of this process: its trace is sampled (only sampled spans are recorded).
      const { t0, t1, t2, t3 } = parentSpan;
      if (!this.plan.parentBased && (t0 ^ t1 ^ t2 ^ t3) >>> 0 >= this.bound)
        return dropped(t0, t1, t2, t3, s0, s1, parentSpan.traceState);
      const parent = { s0: parentSpan.s0, s1: parentSpan.s1, remote: false };
      return this.record(scope, name, kind, t0, t1, t2, t3, s0, s1, parent, parentSpan.traceState, options);
    }
    const parentIds = parentSpan?.spanContext();
    if (parentIds !== undefined && isSpanContextValid(parentIds)) {
      // A caller's span (a traceparent), or another tracer's.
      const id = parentIds.traceId;
      const t0 = Number.parseInt(id.slice(0, 8), 16);
      const t1 = Number.parseInt(id.slice(8, 16), 16);
      const t2 = Number.parseInt(id.slice(16, 24), 16);
      const t3 = Number.parseInt(id.slice(24, 32), 16);
      const kept = this.plan.parentBased
        ? (parentIds.traceFlags & TraceFlags.SAMPLED) !== 0
        : (t0 ^ t1 ^ t2 ^ t3) >>> 0 < this.bound;
      if (!kept) return dropped(t0, t1, t2, t3, s0, s1, parentIds.traceState);
      const parent = {
        s0: Number.parseInt(parentIds.spanId.slice(0, 8), 16),
        s1: Number.parseInt(parentIds.spanId.slice(8, 16), 16),
        remote: parentIds.isRemote === true,
      };
      return this.record(scope, name, kind, t0, t1, t2, t3, s0, s1, parent, parentIds.traceState, options);
    }
    if (this.decided) {
      this.decided = false;
      return this.record(
        scope,
        name,
        kind,
        DRAWN[0],
        DRAWN[1],
        DRAWN[2],
        DRAWN[3],
        s0,
        s1,
        undefined,
        undefined,
        options,
      );
    }
    // A new trace nothing decided first (a span started through the API by other code).
    const t0 = randomWord();
    const t1 = randomWord();
    const t2 = randomWord();
    const t3 = randomWord() || 1;
    if ((t0 ^ t1 ^ t2 ^ t3) >>> 0 >= this.bound) return dropped(t0, t1, t2, t3, s0, s1, undefined);
    return this.record(scope, name, kind, t0, t1, t2, t3, s0, s1, undefined, undefined, options);
  }

  private record(
    scope: Scope,
    name: string,
    kind: SpanKind,
    t0: number,
    t1: number,
    t2: number,
    t3: number,
    s0: number,
    s1: number,
    parent: ParentIds | undefined,
    traceState: TraceState | undefined,
    options: ApiSpanOptions,
  ): RecordedSpan {
    const start = options.startTime === undefined ? performance.now() : performanceTime(options.startTime);
    return new RecordedSpan(
      this,
      scope,
      name,
      kind,
      t0,
      t1,
      t2,
      t3,
      s0,
      s1,
      parent,
      traceState,
      start,
      options.attributes,
      options.links,
    );
  }
}

const INVALID_CONTEXT: SpanContext = trace
  .wrapSpanContext({
    traceId: '00000000000000000000000000000000',
    spanId: '0000000000000000',
    traceFlags: TraceFlags.NONE,
  })
  .spanContext();

/** A span the sampler left out: its ids travel on (a traceparent flagged not sampled), nothing is recorded. */
function dropped(
  t0: number,
  t1: number,
  t2: number,
  t3: number,
  s0: number,
  s1: number,
  traceState: TraceState | undefined,
): Span {
  return trace.wrapSpanContext({
    traceId: hexWord(t0) + hexWord(t1) + hexWord(t2) + hexWord(t3),
    spanId: hexWord(s0) + hexWord(s1),
    traceFlags: TraceFlags.NONE,
    traceState,
  });
}

/** A tracer of one instrumentation scope. */
class ScopeTracer implements Tracer {
  constructor(
    private readonly recorder: SpanRecorder,
    private readonly scope: Scope,
  ) {}

  startSpan(name: string, options: ApiSpanOptions = {}, context: Context = apiContext.active()): Span {
    return this.recorder.startSpan(this.scope, name, options, context);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...args: unknown[]): ReturnType<F> {
    const fn = args[args.length - 1] as F;
    const options = (args.length > 1 ? args[0] : {}) as ApiSpanOptions;
    const parent = (args.length > 2 ? args[1] : apiContext.active()) as Context;
    const span = this.startSpan(name, options, parent);
    return apiContext.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span);
  }
}
