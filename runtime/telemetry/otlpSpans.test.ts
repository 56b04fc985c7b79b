import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Attributes, ROOT_CONTEXT, SpanKind, SpanStatusCode, type TraceState, trace } from '@opentelemetry/api';
import { TraceState as CoreTraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { encodeResource, frameRequest } from './otlpSpans.js';
import { ProtoWriter } from './protoWriter.js';
import { type RecordedSpan, type SpanLimits, SpanRecorder } from './recordedSpan.js';
import { SpanBatches } from './spanBatches.js';

const protoDir = join(fileURLToPath(new URL('../../test/support/otlp', import.meta.url)));
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => join(protoDir, target);
root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');

/** A request decoded by the official protos, every field present (zero where unset), so two encodings compare. */
function decode(bytes: Uint8Array): unknown {
  return Request.toObject(Request.decode(bytes), {
    longs: String,
    enums: Number,
    bytes: String,
    defaults: true,
    arrays: true,
  });
}

const LIMITS: SpanLimits = { attributes: 128, events: 128, links: 128, valueLength: Number.POSITIVE_INFINITY };
const RESOURCE: Attributes = { 'service.name': 'helpdesk', 'service.version': '1.2.3', 'host.cpus': 2 };

/**
 * A `performance.now()` time as the SDK's HrTime: whole seconds since the epoch and nanoseconds,
 * split as the encoder splits it (the time origin's whole seconds, then the milliseconds past them).
 */
function hrTime(at: number): [number, number] {
  const originSeconds = Math.floor(performance.timeOrigin / 1000);
  const millis = performance.timeOrigin - originSeconds * 1000 + at;
  const whole = Math.floor(millis / 1000);
  const nanos = Math.round((millis - whole * 1000) * 1e6);
  return nanos >= 1e9 ? [originSeconds + whole + 1, nanos - 1e9] : [originSeconds + whole, nanos];
}

const resource = { attributes: RESOURCE } as unknown as ReadableSpan['resource'];

/** A recorded span as the SDK's ReadableSpan, for the SDK's serializer to encode. */
function readable(span: RecordedSpan): ReadableSpan {
  const parentIds = span.parent
    ? {
        traceId: span.spanContext().traceId,
        spanId:
          (span.parent.s0 >>> 0).toString(16).padStart(8, '0') + (span.parent.s1 >>> 0).toString(16).padStart(8, '0'),
        traceFlags: 1,
        isRemote: span.parent.remote,
      }
    : undefined;
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: parentIds,
    startTime: hrTime(span.startTime),
    endTime: hrTime(span.endTime),
    status: { code: span.statusCode, message: span.statusMessage },
    attributes: span.attributes,
    links: (span.links ?? []).map((link) => ({ context: link.context, attributes: link.attributes })),
    events: (span.events ?? []).map((event) => ({
      name: event.name,
      attributes: event.attributes,
      time: hrTime(event.time),
      droppedAttributesCount: event.droppedAttributes,
    })),
    duration: [0, 0],
    ended: true,
    resource,
    instrumentationScope: span.scope,
    droppedAttributesCount: span.droppedAttributes,
    droppedEventsCount: span.droppedEvents,
    droppedLinksCount: span.droppedLinks,
  };
}

/** Spans recorded through the API, and the one request their batch is sent as. */
function record(limits: SpanLimits, make: (recorder: SpanRecorder) => void): { spans: RecordedSpan[]; sent: Buffer } {
  const spans: RecordedSpan[] = [];
  const sent: Buffer[] = [];
  const batches = new SpanBatches({ maxBatch: 512, delayMs: 60_000, maxQueue: 2048 }, (batch, done) => {
    expect(batch.spans).toBe(spans.length);
    // Framed as the export thread frames it.
    sent.push(frameRequest(encodeResource(RESOURCE), batch.scopes));
    done();
  });
  const recorder = new SpanRecorder({ parentBased: true, rootRatio: 1 }, limits, (span) => {
    spans.push(span);
    batches.add(span);
  });
  make(recorder);
  batches.flush();
  expect(sent).toHaveLength(1);
  return { spans, sent: sent[0] };
}

describe('spans encoded as OTLP protobuf', () => {
  it('decode through the official protos exactly as the SDK serializer writes them, field for field', () => {
    const statement = Object.freeze({
      'db.system.name': 'sqlite',
      'db.operation.name': 'SELECT',
      'db.collection.name': 'tickets',
    });
    const { spans, sent } = record(LIMITS, (recorder) => {
      const tracer = recorder.getTracer('entigen', '0.1.0');
      const server = tracer.startSpan('GET', {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': 'GET', 'url.path': '/api/v1/tickets/7' },
      });
      const context = trace.setSpan(ROOT_CONTEXT, server);
      const select = tracer.startSpan('SELECT tickets', { kind: SpanKind.CLIENT, attributes: statement }, context);
      select.end();
      // The same frozen block again: it is encoded once and copied.
      tracer.startSpan('SELECT tickets', { kind: SpanKind.CLIENT, attributes: statement }, context).end();
      const hook = tracer.startSpan('hook beforeCreate', {}, context);
      hook.setAttributes({
        'entigen.hook': 'beforeCreate',
        count: 42,
        negative: -7,
        big: 2 ** 40,
        ratio: 0.25,
        flag: false,
        names: ['a', 'b', null as unknown as string],
        sizes: [1, 2.5, 3],
        flags: [true, false],
        empty: [],
        'café ☕': 'crème brûlée, naïve façade',
        long: 'x'.repeat(300),
        longer: 'ü'.repeat(10_000),
      });
      hook.addEvent('checkpoint', { step: 1 }, performance.now());
      hook.recordException(new TypeError('the subject is required'));
      hook.recordException('a plain message');
      hook.setStatus({ code: SpanStatusCode.ERROR, message: 'the hook refused' });
      hook.updateName('hook beforeCreate (tickets)');
      hook.end();
      const linked = tracer.startSpan(
        'commit',
        {
          links: [
            { context: select.spanContext(), attributes: { 'entigen.transactions': 3 } },
            {
              context: {
                traceId: '0af7651916cd43dd8448eb211c80319c',
                spanId: 'b7ad6b7169203331',
                traceFlags: 1,
                isRemote: true,
                traceState: new CoreTraceState('vendor=one,other=two') as TraceState,
              },
            },
          ],
        },
        context,
      );
      linked.setStatus({ code: SpanStatusCode.OK });
      linked.end();
      server.setAttribute('http.response.status_code', 200);
      server.end();
      // A caller's trace, continued: a remote parent with a tracestate.
      const remote = trace.wrapSpanContext({
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        spanId: '00f067aa0ba902b7',
        traceFlags: 1,
        isRemote: true,
        traceState: new CoreTraceState('congo=t61rcWkgMzE') as TraceState,
      });
      tracer.startSpan('GET /api/v1/health', { kind: SpanKind.SERVER }, trace.setSpan(ROOT_CONTEXT, remote)).end();
      // Another instrumentation scope: a ScopeSpans of its own.
      recorder.getTracer('my-hooks').startSpan('work', {}, context).end();
    });
    expect(spans.map((span) => span.name)).toEqual([
      'SELECT tickets',
      'SELECT tickets',
      'hook beforeCreate (tickets)',
      'commit',
      'GET',
      'GET /api/v1/health',
      'work',
    ]);
    const ours = decode(sent) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
    // The SDK groups by scope in the order scopes first appear, as the batch does.
    const sdk = decode(ProtobufTraceSerializer.serializeRequest(spans.map(readable))!);
    expect(ours).toEqual(sdk);
    // And it says what the spans said.
    const decoded = ours.resourceSpans[0].scopeSpans[0].spans as {
      name: string;
      parentSpanId: string;
      flags: number;
      traceState: string;
      attributes: { key: string; value: Record<string, unknown> }[];
    }[];
    expect(decoded[2].attributes.find((a) => a.key === 'café ☕')?.value.stringValue).toBe(
      'crème brûlée, naïve façade',
    );
    expect(decoded[2].attributes.find((a) => a.key === 'longer')?.value.stringValue).toBe('ü'.repeat(10_000));
    expect(decoded[5].traceState).toBe('congo=t61rcWkgMzE');
    expect(decoded[5].flags).toBe(0x301);
    expect(decoded[0].flags).toBe(0x101);
    expect(Buffer.from(decoded[5].parentSpanId, 'base64').toString('hex')).toBe('00f067aa0ba902b7');
    // The times are the spans' own, to the microsecond.
    const start = Number(BigInt((decoded[0] as unknown as { startTimeUnixNano: string }).startTimeUnixNano) / 1000n);
    expect(Math.abs(start - (performance.timeOrigin + spans[0].startTime) * 1000)).toBeLessThan(2);
  });

  it('keep the limits on attributes, events and links, counting what they drop', () => {
    const { spans, sent } = record({ attributes: 2, events: 1, links: 1, valueLength: 4 }, (recorder) => {
      const span = recorder.getTracer('entigen').startSpan('limited', {
        attributes: { a: 'abcdefgh', b: ['abcdefgh', null as unknown as string, 'xy'], c: 3 },
        links: [
          { context: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 } },
          { context: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203332', traceFlags: 1 } },
        ],
      });
      span.setAttribute('a', 'replaced, and cut');
      span.addEvent('one', { x: 1, y: 2, z: 3 });
      span.addEvent('two');
      span.end();
      span.setAttribute('after', 'the end');
    });
    expect(spans[0].attributes).toEqual({ a: 'repl', b: ['abcd', null, 'xy'] });
    // An array is the span's own copy.
    const given = ['one'];
    const span = new SpanRecorder({ parentBased: true, rootRatio: 1 }, LIMITS, () => {})
      .getTracer('entigen')
      .startSpan('copies');
    span.setAttribute('list', given);
    given.push('two');
    expect((span as RecordedSpan).attributes.list).toEqual(['one']);
    expect([spans[0].droppedAttributes, spans[0].droppedEvents, spans[0].droppedLinks]).toEqual([1, 1, 1]);
    expect(spans[0].events?.[0].droppedAttributes).toBe(1);
    expect(decode(sent)).toEqual(decode(ProtobufTraceSerializer.serializeRequest(spans.map(readable))!));
  });

  it('write times as nanoseconds since the epoch, exactly', () => {
    const writer = new ProtoWriter(16);
    for (const [seconds, nanos] of [
      [0, 0],
      [1_733_500_000, 999_999_999],
      [4_294_967_295, 123_456_789],
      [65_535, 1],
      [65_536, 0],
    ]) {
      writer.pos = 0;
      writer.fixed64Time(1, seconds, nanos);
      expect(writer.written().readBigUInt64LE(1)).toBe(BigInt(seconds) * 1_000_000_000n + BigInt(nanos));
    }
  });

  it('widen a message length past one byte, and write negative integers as int64', () => {
    const writer = new ProtoWriter(8);
    const at = writer.open(1);
    writer.string(2, 'y'.repeat(20_000));
    writer.close(at);
    const bytes = writer.written();
    // tag, a three-byte length, then the string field (tag, three-byte length, 20000 bytes).
    expect(bytes.length).toBe(1 + 3 + 1 + 3 + 20_000);
    const negative = new ProtoWriter(4);
    negative.varint(-1);
    expect(negative.written()).toEqual(Buffer.from('ffffffffffffffffff01', 'hex'));
  });

  it('send a batch when it is full or has waited, and drop what passes the queue while exports are unanswered', async () => {
    const sent: number[] = [];
    const batches = new SpanBatches({ maxBatch: 2, delayMs: 20, maxQueue: 3 }, (batch) =>
      // Never answered: the spans stay counted against the queue.
      sent.push(batch.spans),
    );
    const recorder = new SpanRecorder({ parentBased: true, rootRatio: 1 }, LIMITS, batches.add);
    const tracer = recorder.getTracer('entigen');
    for (let i = 0; i < 2; i++) tracer.startSpan(`span ${i}`).end();
    expect(sent).toEqual([2]);
    tracer.startSpan('waits').end();
    expect(sent).toEqual([2]);
    tracer.startSpan('over the queue').end();
    expect(batches.dropped).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(sent).toEqual([2, 1]);
  });
});
