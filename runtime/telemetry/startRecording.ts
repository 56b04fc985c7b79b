import { type Attributes, context, propagation, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ExportWarnings } from './exportWarnings.js';
import { type SpanLimits, SpanRecorder } from './recordedSpan.js';
import type { SamplingPlan } from './sampling.js';
import { batchSettings, SpanBatches } from './spanBatches.js';
import { ThreadedExporter } from './spanExporter.js';
import { disableTracing, enableTracing, SyncContextManager } from './tracing.js';

/** A started exporter: what it does at a flush and on the way down. */
export interface Running {
  /** Exports what is buffered now. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * OTLP protobuf (the default): spans recorded by entigen and encoded as they end
 * (recordedSpan.ts, otlpSpans.ts), sent from a thread of their own (spanExporter.ts) by the
 * exporter base the SDK's own OTLP exporters are built on, so OTEL_EXPORTER_OTLP_* (headers,
 * timeout, compression, retries) mean what they mean there.
 */
export async function startRecording(
  resource: Attributes,
  plan: SamplingPlan,
  url: string | undefined,
  env: NodeJS.ProcessEnv,
  version: string,
  warnings: ExportWarnings,
): Promise<Running> {
  const exporter = new ThreadedExporter({ url, protocol: 'http/protobuf', resource }, env, warnings.failed);
  const batches = new SpanBatches(batchSettings(env), exporter.send, warnings.droppedSpans);
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
      await exporter.flush();
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
