import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { repoRoot } from './cli.js';

/** A span as the receiver decoded it, from either encoding. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  /** The resource's attributes (service.name, ...). */
  resource: Record<string, unknown>;
  /** How it arrived: `protobuf` or `json`. */
  encoding: 'protobuf' | 'json';
  /** The headers of the export that carried it. */
  headers: IncomingHttpHeaders;
}

export interface OtlpReceiver {
  /** The base address, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Requests that were not OTLP trace exports (path, content type). */
  refused: string[];
  /** Waits until a span satisfies `match`, for `timeoutMs` at most. */
  waitFor(match: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>;
  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[];
  close(): Promise<void>;
}

/**
 * A real OTLP/HTTP receiver for traces: `POST /v1/traces` (or any path ending so) decoded with the
 * official OTLP protobuf definitions (test/support/otlp, from open-telemetry/opentelemetry-proto)
 * for `application/x-protobuf`, and as OTLP's JSON mapping for `application/json`.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const root = new protobuf.Root();
  const protoDir = join(repoRoot, 'test', 'support', 'otlp');
  root.resolvePath = (_origin, target) => join(protoDir, target);
  root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto', { keepCase: false });
  const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const Response = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim();
      if (req.method !== 'POST' || !req.url?.endsWith('/v1/traces')) {
        refused.push(`${req.method} ${req.url} ${type}`);
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      try {
        if (type === 'application/x-protobuf') {
          const decoded = Request.toObject(Request.decode(body), { longs: String, enums: Number, bytes: Buffer });
          spans.push(...fromExport(decoded, 'protobuf', req.headers));
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Response.encode({}).finish());
        } else if (type === 'application/json') {
          spans.push(...fromExport(JSON.parse(body.toString('utf8')), 'json', req.headers));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else {
          refused.push(`POST ${req.url} ${type}`);
          res.writeHead(415).end();
        }
      } catch (error) {
        refused.push(`POST ${req.url} ${type}: ${(error as Error).message}`);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    refused,
    async waitFor(match, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = spans.find(match);
        if (found) return found;
        if (Date.now() > until)
          throw new Error(`no such span in ${timeoutMs} ms; received: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    trace: (traceId) => spans.filter((span) => span.traceId === traceId),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type Json = any;

/** The spans of an ExportTraceServiceRequest, decoded from protobuf (ids as bytes) or JSON (ids as hex). */
function fromExport(request: Json, encoding: 'protobuf' | 'json', headers: IncomingHttpHeaders): ReceivedSpan[] {
  const id = (value: unknown) =>
    value === undefined || value === null ? '' : Buffer.isBuffer(value) ? value.toString('hex') : String(value);
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? [])
      for (const span of scopeSpans.spans ?? [])
        out.push({
          traceId: id(span.traceId),
          spanId: id(span.spanId),
          parentSpanId: id(span.parentSpanId),
          name: span.name,
          kind: Number(span.kind ?? 0),
          attributes: attributesOf(span.attributes),
          status: { code: Number(span.status?.code ?? 0), message: span.status?.message || undefined },
          events: (span.events ?? []).map((event: Json) => ({
            name: event.name,
            attributes: attributesOf(event.attributes),
          })),
          links: (span.links ?? []).map((link: Json) => ({ traceId: id(link.traceId), spanId: id(link.spanId) })),
          resource,
          encoding,
          headers,
        });
  }
  return out;
}

function attributesOf(list: Json[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = anyValue(value);
  return out;
}

function anyValue(value: Json): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return Number(value.doubleValue);
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(anyValue);
  return undefined;
}
