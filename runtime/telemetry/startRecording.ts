import { type Attributes, context, propagation, trace } from '@opentelemetry/api';
import {
  CompositePropagator,
  ExportResultCode,
  globalErrorHandler,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { encodeResource } from './otlpSpans.js';
import { type SpanLimits, SpanRecorder } from './recordedSpan.js';
import type { SamplingPlan } from './sampling.js';
import { batchSettings, type EncodedBatch, SpanBatches } from './spanBatches.js';
import { disableTracing, enableTracing, SyncContextManager } from './tracing.js';

/** A started exporter: what it does at a flush and on the way down. */
export interface Running {
  /** Exports what is buffered now. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * OTLP protobuf (the default): spans recorded by entigen and encoded as they end
 * (recordedSpan.ts, otlpSpans.ts), sent by the exporter base the SDK's own OTLP exporters are
 * built on, so OTEL_EXPORTER_OTLP_* (headers, timeout, compression, retries) mean what they mean there.
 */
export async function startRecording(
  resource: Attributes,
  plan: SamplingPlan,
  url: string | undefined,
  env: NodeJS.ProcessEnv,
  version: string,
): Promise<Running> {
  const exporter = createOtlpHttpExportDelegate(
    convertLegacyHttpOptions(url ? { url } : {}, 'TRACES', 'v1/traces', {
      'Content-Type': 'application/x-protobuf',
    }),
    {
      serializeRequest: (batch: EncodedBatch) => batch.bytes,
      deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data),
    },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch: EncodedBatch) => batch.spans },
    undefined,
  );
  const batches = new SpanBatches(encodeResource(resource), batchSettings(env), (batch, done) =>
    exporter.export(batch, (result) => {
      done();
      if (result.code !== ExportResultCode.SUCCESS)
        globalErrorHandler(result.error ?? new Error('the trace export failed'));
    }),
  );
  const recorder = new SpanRecorder(plan, spanLimits(env), batches.add);
  // The W3C trace-context and baggage propagators and a context manager without async_hooks, as
  // the SDK registers them, for code that uses the API's globals (a hook's own spans).
  const contextManager = new SyncContextManager();
  trace.setGlobalTracerProvider(recorder);
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  );
  enableTracing('entigen', version, contextManager, recorder, () => recorder.sampleRoot());
  return {
    async flush() {
      batches.flush();
      await exporter.forceFlush();
    },
    async shutdown() {
      disableTracing();
      batches.flush();
      await exporter.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** OTEL_SPAN_*_LIMIT and OTEL_ATTRIBUTE_*_LIMIT, with the specification's defaults (128, no length limit). */
export function spanLimits(env: NodeJS.ProcessEnv): SpanLimits {
  const limit = (names: string[], fallback: number): number => {
    for (const name of names) {
      const value = Number(env[name]?.trim() || Number.NaN);
      if (Number.isInteger(value) && value >= 0) return value;
    }
    return fallback;
  };
  return {
    attributes: limit(['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'], 128),
    events: limit(['OTEL_SPAN_EVENT_COUNT_LIMIT'], 128),
    links: limit(['OTEL_SPAN_LINK_COUNT_LIMIT'], 128),
    valueLength: limit(
      ['OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'],
      Number.POSITIVE_INFINITY,
    ),
  };
}
