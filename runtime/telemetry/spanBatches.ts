import { encodeScope, writeSpan } from './otlpSpans.js';
import { ProtoWriter } from './protoWriter.js';
import type { RecordedSpan, Scope } from './recordedSpan.js';

/** OTEL_BSP_*: how many spans an export carries, how long a span may wait for one, how many may wait at all. */
export interface BatchSettings {
  maxBatch: number;
  delayMs: number;
  maxQueue: number;
}

/** One instrumentation scope's part of a batch: its encoded scope, and its spans, each a `spans` field of ScopeSpans. */
export interface EncodedScope {
  scope: Uint8Array;
  /** In a buffer of their own, which the batch's receiver may take (transfer) with them. */
  spans: Uint8Array;
}

/** A batch of encoded spans, by scope; `frameRequest` makes the ExportTraceServiceRequest that sends them. */
export interface SpanBatch {
  scopes: EncodedScope[];
  spans: number;
}

/** OTEL_BSP_* as the OpenTelemetry specification spells them, with its defaults (512 spans, 5 s, 2048 spans). */
export function batchSettings(env: NodeJS.ProcessEnv): BatchSettings {
  const maxQueue = positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  return {
    maxQueue,
    maxBatch: Math.min(positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512), maxQueue),
    delayMs: positive(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
  };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name]?.trim() || fallback);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

interface OpenScope {
  scope: Uint8Array;
  writer: ProtoWriter;
}

/**
 * Spans encoded the moment they end, into one buffer per instrumentation scope, and sent as a
 * request when a batch is full or the oldest span has waited the schedule's delay. Spans beyond
 * the queue's bound (waiting, or sent and not yet answered) are dropped and counted, as the SDK's
 * batch processor drops them.
 */
export class SpanBatches {
  private readonly scopes = new Map<Scope, OpenScope>();
  private waiting = 0;
  /** Spans sent and not yet answered. */
  private sending = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Spans dropped because the queue was full. */
  dropped = 0;

  constructor(
    private readonly settings: BatchSettings,
    /** Sends a batch; `done` once the collector answered (or the export gave up). */
    private readonly send: (batch: SpanBatch, done: () => void) => void,
    /** Told of each span dropped because the queue was full. */
    private readonly onDrop: (count: number) => void = () => undefined,
  ) {}

  /** Encodes an ended span into its scope's batch. */
  readonly add = (span: RecordedSpan): void => {
    if (this.waiting + this.sending >= this.settings.maxQueue) {
      this.dropped++;
      this.onDrop(1);
      return;
    }
    let open = this.scopes.get(span.scope);
    if (open === undefined) {
      open = { scope: encodeScope(span.scope), writer: new ProtoWriter() };
      this.scopes.set(span.scope, open);
    }
    writeSpan(open.writer, span);
    if (++this.waiting >= this.settings.maxBatch) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(this.flush, this.settings.delayMs);
      this.timer.unref();
    }
  };

  /** Sends what waits now. */
  readonly flush = (): void => {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.waiting === 0) return;
    // Each scope's buffer goes with the batch (no copy); the next batch is written in a new one.
    const scopes: EncodedScope[] = [];
    for (const open of this.scopes.values()) {
      if (open.writer.pos > 0) scopes.push({ scope: open.scope, spans: open.writer.take() });
    }
    const spans = this.waiting;
    this.waiting = 0;
    this.sending += spans;
    this.send({ scopes, spans }, () => {
      this.sending -= spans;
    });
  };
}
