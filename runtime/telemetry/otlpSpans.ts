import type { Attributes, AttributeValue, SpanContext } from '@opentelemetry/api';
import { ProtoWriter } from './protoWriter.js';
import type { RecordedSpan, Scope } from './recordedSpan.js';

/**
 * Recorded spans as OTLP's protobuf messages (opentelemetry/proto/trace/v1/trace.proto), each
 * written as it ends; a batch is framed as one ExportTraceServiceRequest when it is sent. The
 * fields are those the SDK's serializer writes, so a collector sees the same spans either way.
 */

/** Span.flags: the W3C flags, and whether the parent was remote (with the bit saying that is known). */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

const timeOrigin = performance.timeOrigin;
const originSeconds = Math.floor(timeOrigin / 1000);
const originMillis = timeOrigin - originSeconds * 1000;

/** Writes a `performance.now()` time as nanoseconds since the epoch. */
function time(writer: ProtoWriter, field: number, at: number): void {
  const millis = originMillis + at;
  const whole = Math.floor(millis / 1000);
  let seconds = originSeconds + whole;
  let nanos = Math.round((millis - whole * 1000) * 1e6);
  if (nanos >= 1e9) {
    seconds++;
    nanos -= 1e9;
  }
  writer.fixed64Time(field, seconds, nanos);
}

/** Frozen attribute blocks shared by many spans (a statement's), encoded once. */
const blocks = new WeakMap<Attributes, Uint8Array>();

/** `Span` (as field 2 of ScopeSpans) for one ended span. */
export function writeSpan(writer: ProtoWriter, span: RecordedSpan): void {
  const at = writer.open(2);
  writer.words(1, span.t0, span.t1, span.t2, span.t3);
  writer.words(2, span.s0, span.s1);
  const traceState = span.traceState?.serialize();
  if (traceState) writer.string(3, traceState);
  const parent = span.parent;
  if (parent !== undefined) writer.words(4, parent.s0, parent.s1);
  writer.string(5, span.name);
  // OTLP counts kinds from 1 (0 is unspecified); the API from 0.
  writer.tag(6, 0);
  writer.varint(span.kind + 1);
  time(writer, 7, span.startTime);
  time(writer, 8, span.endTime);
  if (span.shared !== undefined) {
    let block = blocks.get(span.shared);
    if (block === undefined) {
      const own = new ProtoWriter(256);
      writeAttributes(own, 9, span.shared);
      block = Uint8Array.from(own.written());
      blocks.set(span.shared, block);
    }
    writer.raw(block);
  }
  const own = span.own;
  if (own !== undefined) for (let i = 0; i < own.length; i += 2) writeKeyValue(writer, 9, own[i] as string, own[i + 1]);
  if (span.droppedAttributes > 0) {
    writer.tag(10, 0);
    writer.varint(span.droppedAttributes);
  }
  if (span.events !== undefined) {
    for (const event of span.events) {
      const eventAt = writer.open(11);
      time(writer, 1, event.time);
      writer.string(2, event.name);
      if (event.attributes !== undefined) writeAttributes(writer, 3, event.attributes);
      if (event.droppedAttributes > 0) {
        writer.tag(4, 0);
        writer.varint(event.droppedAttributes);
      }
      writer.close(eventAt);
    }
  }
  if (span.droppedEvents > 0) {
    writer.tag(12, 0);
    writer.varint(span.droppedEvents);
  }
  if (span.links !== undefined) {
    for (const link of span.links) {
      const linkAt = writer.open(13);
      writeIds(writer, link.context);
      const linkState = link.context.traceState?.serialize();
      if (linkState) writer.string(3, linkState);
      if (link.attributes !== undefined) writeAttributes(writer, 4, link.attributes);
      writer.fixed32(6, flagsOf(link.context.traceFlags, link.context.isRemote === true));
      writer.close(linkAt);
    }
  }
  if (span.droppedLinks > 0) {
    writer.tag(14, 0);
    writer.varint(span.droppedLinks);
  }
  const statusAt = writer.open(15);
  if (span.statusMessage) writer.string(2, span.statusMessage);
  if (span.statusCode !== 0) {
    writer.tag(3, 0);
    writer.varint(span.statusCode);
  }
  writer.close(statusAt);
  // Recorded spans are sampled: the W3C flag is 1.
  writer.fixed32(16, flagsOf(1, parent?.remote === true));
  writer.close(at);
}

function flagsOf(traceFlags: number, remote: boolean): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (remote ? IS_REMOTE : 0);
}

/** A linked span's trace and span ids (fields 1 and 2), from their hex. */
function writeIds(writer: ProtoWriter, context: SpanContext): void {
  writer.tag(1, 2);
  writer.varint(16);
  writer.ensure(16);
  writer.pos += writer.buf.write(context.traceId, writer.pos, 16, 'hex');
  writer.tag(2, 2);
  writer.varint(8);
  writer.ensure(8);
  writer.pos += writer.buf.write(context.spanId, writer.pos, 8, 'hex');
}

/** Attributes as repeated KeyValue in `field`. */
export function writeAttributes(writer: ProtoWriter, field: number, attributes: Attributes): void {
  for (const key in attributes) {
    if (!Object.hasOwn(attributes, key)) continue;
    const value = attributes[key];
    if (value !== undefined) writeKeyValue(writer, field, key, value);
  }
}

/** One attribute as a KeyValue in `field`. */
function writeKeyValue(writer: ProtoWriter, field: number, key: string, value: AttributeValue): void {
  const at = writer.open(field);
  writer.string(1, key);
  const valueAt = writer.open(2);
  writeValue(writer, value);
  writer.close(valueAt);
  writer.close(at);
}

/** An AnyValue's field for one attribute value (an empty AnyValue for a null in an array). */
function writeValue(writer: ProtoWriter, value: AttributeValue | null | undefined): void {
  switch (typeof value) {
    case 'string':
      writer.string(1, value);
      return;
    case 'boolean':
      writer.tag(2, 0);
      writer.varint(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
        writer.tag(3, 0);
        writer.varint(value);
      } else writer.double(4, value);
      return;
  }
  if (Array.isArray(value)) {
    const arrayAt = writer.open(5);
    for (const item of value) {
      const itemAt = writer.open(1);
      writeValue(writer, item);
      writer.close(itemAt);
    }
    writer.close(arrayAt);
  }
}

/** A Resource message's body: its attributes. */
export function encodeResource(attributes: Attributes): Uint8Array {
  const writer = new ProtoWriter(1024);
  writeAttributes(writer, 1, attributes);
  return Uint8Array.from(writer.written());
}

/** An InstrumentationScope message's body: name and version. */
export function encodeScope(scope: Scope): Uint8Array {
  const writer = new ProtoWriter(256);
  writer.string(1, scope.name);
  if (scope.version) writer.string(2, scope.version);
  return Uint8Array.from(writer.written());
}

/**
 * One ExportTraceServiceRequest: a ResourceSpans of the process's resource, with a ScopeSpans for
 * each scope's encoded spans (each already a `spans` field).
 */
export function frameRequest(
  resource: Uint8Array,
  scopes: readonly { scope: Uint8Array; spans: Uint8Array }[],
): Buffer {
  let size = resource.length + 16;
  for (const { scope, spans } of scopes) size += scope.length + spans.length + 16;
  const writer = new ProtoWriter(size);
  const resourceSpansAt = writer.open(1);
  writer.bytes(1, resource);
  for (const { scope, spans } of scopes) {
    writer.tag(2, 2);
    writer.varint(scope.length + spans.length + 1 + varintSize(scope.length));
    writer.bytes(1, scope);
    writer.raw(spans);
  }
  writer.close(resourceSpansAt);
  return writer.written();
}

function varintSize(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}
