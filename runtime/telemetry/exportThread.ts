import { parentPort, workerData } from 'node:worker_threads';
import { ExportResultCode } from '@opentelemetry/core';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { encodeResource, frameRequest } from './otlpSpans.js';
import type { ExportReply, ExportRequest, ExportThreadData } from './spanExporter.js';

/**
 * The thread that sends encoded spans to the collector (spanExporter.ts starts it): it frames each
 * protobuf batch as one ExportTraceServiceRequest (a JSON one comes framed) and posts it through
 * the exporter base the SDK's OTLP exporters are built on, so OTEL_EXPORTER_OTLP_* (headers,
 * timeout, compression, retries) mean what they mean there. The HTTP client runs here, not
 * beside the server's requests.
 */
const port = parentPort;
if (port === null) throw new Error('exportThread.js runs as a worker thread');
const { url, resource, protocol } = workerData as ExportThreadData;
const json = protocol === 'http/json';
const encodedResource = json ? undefined : encodeResource(resource);

interface Framed {
  bytes: Uint8Array;
  spans: number;
}

const exporter = createOtlpHttpExportDelegate(
  convertLegacyHttpOptions(url ? { url } : {}, 'TRACES', 'v1/traces', {
    'Content-Type': json ? 'application/json' : 'application/x-protobuf',
  }),
  {
    serializeRequest: (request: Framed) => request.bytes,
    deserializeResponse: (data: Uint8Array) =>
      json ? JsonTraceSerializer.deserializeResponse(data) : ProtobufTraceSerializer.deserializeResponse(data),
  },
  'otlp_http_span_exporter',
  { name: 'span', countItems: (request: Framed) => request.spans },
  undefined,
);

function reply(message: ExportReply): void {
  port?.postMessage(message);
}

port.on('message', (message: ExportRequest) => {
  const { id } = message;
  if (message.kind === 'export' || message.kind === 'request') {
    const framed =
      message.kind === 'request'
        ? { bytes: message.bytes, spans: message.spans }
        : { bytes: frameRequest(encodedResource ?? encodeResource(resource), message.scopes), spans: message.spans };
    exporter.export(framed, (result) =>
      reply({
        id,
        error:
          result.code === ExportResultCode.SUCCESS ? undefined : (result.error?.message ?? 'the trace export failed'),
      }),
    );
    return;
  }
  const done = message.kind === 'flush' ? exporter.forceFlush() : exporter.shutdown();
  done.then(
    () => reply({ id, error: undefined }),
    (error: unknown) => reply({ id, error: error instanceof Error ? error.message : String(error) }),
  );
});
