import { propagation, type SpanContext, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import * as sdk from '@opentelemetry/sdk-trace-base';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  RandomIdGenerator,
  SamplingDecision,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { SpanRecorder } from './recordedSpan.js';
import { configuredSampler, DecidedRoots } from './startTracing.js';
import {
  continueTrace,
  disableTracing,
  enableTracing,
  inGroupCommit,
  inSpan,
  ROOT_CONTEXT,
  SpanKind,
  SyncContextManager,
  startSpan,
  traceparentOf,
} from './tracing.js';

/** A finished span, from either tracer. */
interface Finished {
  name: string;
  spanContext(): SpanContext;
}

/** Tracing as startTracing sets it up for http/json: the SDK's spans, `DecidedRoots` deciding. */
function sdkTraced(env: NodeJS.ProcessEnv): () => Finished[] {
  const exporter = new InMemorySpanExporter();
  const roots = new DecidedRoots(
    configuredSampler(sdk, undefined, env),
    new RandomIdGenerator(),
    SamplingDecision.RECORD_AND_SAMPLED,
  );
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    sampler: roots,
    idGenerator: roots,
  });
  enableTracing('test', '0', new SyncContextManager(), provider, () => roots.sampleRoot());
  return () => exporter.getFinishedSpans();
}

/** Tracing as startTracing sets it up for http/protobuf: entigen's recorded spans. */
function recorded(env: NodeJS.ProcessEnv): () => Finished[] {
  const spans: Finished[] = [];
  const limits = { attributes: 128, events: 128, links: 128, valueLength: Number.POSITIVE_INFINITY };
  const recorder = new SpanRecorder(configuredSampler(sdk, undefined, env), limits, (span) => spans.push(span));
  enableTracing('test', '0', new SyncContextManager(), recorder, () => recorder.sampleRoot());
  return () => spans;
}

afterEach(() => {
  disableTracing();
  propagation.disable();
});

describe.each([
  ['the SDK', sdkTraced],
  ['entigen’s recorder', recorded],
])('new traces decided before a span is made, with %s', (_name, traced) => {
  it('build the sampler the variables name, as the SDK does', () => {
    const named = (env: NodeJS.ProcessEnv) => configuredSampler(sdk, undefined, env).sampler.toString();
    expect(named({})).toContain('ParentBased{root=AlwaysOnSampler');
    expect(named({ OTEL_TRACES_SAMPLER: 'always_off' })).toBe('AlwaysOffSampler');
    expect(named({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toBe(
      'TraceIdRatioBased{0.25}',
    );
    expect(named({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' })).toContain('root=TraceIdRatioBased{1}');
    expect(configuredSampler(sdk, { sampleRatio: 0.1 }, {}).sampler.toString()).toContain(
      'root=TraceIdRatioBased{0.1}',
    );
    expect(configuredSampler(sdk, { sampleRatio: 0.1 }, { OTEL_TRACES_SAMPLER: 'always_on' }).sampler.toString()).toBe(
      'AlwaysOnSampler',
    );
    // The share of new traces each keeps.
    const ratio = (env: NodeJS.ProcessEnv) => configuredSampler(sdk, { sampleRatio: 0.1 }, env).rootRatio;
    expect(ratio({})).toBe(0.1);
    expect(ratio({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' })).toBe(1);
    expect(ratio({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).toBe(0);
    expect(ratio({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.3' })).toBe(0.3);
    expect(ratio({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '' })).toBe(1);
  });

  it('keep a ratio of new traces, decided as the SDK decides on each trace id, with children in the trace', () => {
    const finished = traced({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    let started = 0;
    for (let i = 0; i < 2000; i++) {
      const request = startSpan('GET', { kind: SpanKind.SERVER, parent: ROOT_CONTEXT });
      if (!request) continue;
      started++;
      inSpan('SELECT things', { parent: request.context }, () => undefined);
      request.span.end();
    }
    const spans = finished();
    const roots = spans.filter((s) => s.name === 'GET');
    expect(roots).toHaveLength(started);
    // 1000 expected; 6 standard deviations (22 each) either side.
    expect(started).toBeGreaterThan(868);
    expect(started).toBeLessThan(1132);
    // The same decision the SDK's ratio sampler makes on that trace id, and no id given twice.
    const ratio = new TraceIdRatioBasedSampler(0.5);
    for (const root of roots)
      expect(ratio.shouldSample(ROOT_CONTEXT, root.spanContext().traceId).decision).toBe(
        SamplingDecision.RECORD_AND_SAMPLED,
      );
    expect(new Set(roots.map((s) => s.spanContext().traceId)).size).toBe(started);
    const children = spans.filter((s) => s.name === 'SELECT things');
    expect(children.map((s) => s.spanContext().traceId).sort()).toEqual(
      roots.map((s) => s.spanContext().traceId).sort(),
    );
  });

  it('start no new trace at a ratio of 0, but keep a caller’s sampled trace and a job’s run when always on', () => {
    const finished = traced({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
    expect(startSpan('GET', { kind: SpanKind.SERVER, parent: ROOT_CONTEXT })).toBeUndefined();
    expect(inSpan('job nightly', { root: true }, (span) => span)).toBeUndefined();
    const caller = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
      isRemote: true,
    });
    const continued = startSpan('GET', { kind: SpanKind.SERVER, parent: caller });
    expect(continued?.span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    continued?.span.end();
    expect(finished().map((s) => s.name)).toEqual(['GET']);
    // A caller's trace it did not sample is not sampled here either.
    const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319d',
      spanId: 'b7ad6b7169203331',
      traceFlags: 0,
      isRemote: true,
    });
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const left = startSpan('GET', { kind: SpanKind.SERVER, parent: unsampled });
    expect(left?.span.isRecording()).toBe(false);
    // Its ids go on, flagged not sampled, to what runs beneath it and the work it causes later.
    expect(left?.span.spanContext()).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319d', traceFlags: 0 });
    const beneath = inSpan('INSERT comments', { parent: left!.context }, (span, context) => ({ span, context }));
    expect(beneath.span).toBeUndefined();
    expect(traceparentOf(beneath.context)).toMatch(/^00-0af7651916cd43dd8448eb211c80319d-[0-9a-f]{16}-00$/);
    const later = continueTrace(traceparentOf(beneath.context), 'webhook comments.created', {}, (span, context) => ({
      span,
      context,
    }));
    expect(later.span).toBeUndefined();
    expect(traceparentOf(later.context)).toMatch(/^00-0af7651916cd43dd8448eb211c80319d-[0-9a-f]{16}-00$/);
    left?.span.end();
    expect(finished().map((s) => s.name)).toEqual(['GET']);
    disableTracing();

    const always = traced({ OTEL_TRACES_SAMPLER: 'always_on' });
    expect(inSpan('job nightly', { root: true }, (span) => span !== undefined)).toBe(true);
    expect(always().map((s) => s.name)).toEqual(['job nightly']);
  });
  it('put a shared commit in the trace of a sampled member, never of one the sampler left out', () => {
    const finished = traced({});
    const remote = (traceFlags: number, last: string) =>
      trace.setSpanContext(ROOT_CONTEXT, {
        traceId: `0af7651916cd43dd8448eb211c8031${last}`,
        spanId: 'b7ad6b7169203331',
        traceFlags,
        isRemote: true,
      });
    const left = startSpan('POST', { kind: SpanKind.SERVER, parent: remote(0, 'a0') })!;
    const kept = startSpan('POST', { kind: SpanKind.SERVER, parent: remote(1, 'a1') })!;
    const other = startSpan('POST', { kind: SpanKind.SERVER, parent: remote(1, 'a2') })!;
    const members = [{ trace: left.context }, { trace: undefined }, { trace: kept.context }, { trace: other.context }];
    expect(inGroupCommit('sqlite', members, () => 'committed')).toBe('committed');
    const commit = finished().find((s) => s.name === 'COMMIT') as unknown as {
      spanContext(): SpanContext;
      links: { context: SpanContext }[];
    };
    expect(commit.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c8031a1');
    expect(commit.links.map((l) => l.context.traceId)).toEqual(['0af7651916cd43dd8448eb211c8031a2']);
    // Only members the sampler left out: no span at all.
    const before = finished().length;
    expect(inGroupCommit('sqlite', [{ trace: left.context }], () => 'alone')).toBe('alone');
    expect(finished()).toHaveLength(before);
  });
});
