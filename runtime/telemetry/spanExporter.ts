import { existsSync } from 'node:fs';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type { Attributes } from '@opentelemetry/api';
import type { EncodedScope, SpanBatch } from './spanBatches.js';

/**
 * What the export thread starts with: the collector's address (unless the environment names it),
 * the protocol, and the resource protobuf batches are framed with.
 */
export interface ExportThreadData {
  url: string | undefined;
  protocol: 'http/protobuf' | 'http/json';
  resource: Attributes;
}

/** What the export thread is asked to do (each with an id its answer names). */
type Ask =
  /** Frame encoded protobuf spans as one ExportTraceServiceRequest and send it. */
  | { kind: 'export'; spans: number; scopes: EncodedScope[] }
  /** Send a request already encoded (OTLP JSON). */
  | { kind: 'request'; spans: number; bytes: Uint8Array }
  | { kind: 'flush' | 'shutdown' };

/** A message to the export thread. */
export type ExportRequest = Ask & { id: number };

/** The export thread's answer to a request: undefined, or why it failed. */
export interface ExportReply {
  id: number;
  error: string | undefined;
}

/** After the thread stopped unasked (it failed to start, or crashed), it is started again no sooner than this. */
const RESTART_MS = 10_000;

interface Waiting {
  resolve: (error: string | undefined) => void;
  /** Whether the request keeps the process alive until it is answered (a flush, the shutdown). */
  held: boolean;
}

/**
 * Sends batches of encoded spans to the collector from a thread of their own (exportThread.ts),
 * handing each batch's buffers over with no copy. The HTTP client that posts them then never runs
 * among the server's own requests: sharing Node's HTTP and stream code with them, it made that
 * code slower for every request, sampled or not.
 */
export class ThreadedExporter {
  private thread: Worker | undefined;
  private next = 0;
  private readonly waiting = new Map<number, Waiting>();
  private held = 0;
  private stoppedAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly data: ExportThreadData,
    /** The server's environment, over the process's: what the exporter reads OTEL_EXPORTER_OTLP_* from. */
    private readonly env: NodeJS.ProcessEnv,
    /** Where a failed export (or a failing thread) is reported. */
    private readonly onError: (error: Error) => void,
  ) {
    this.thread = this.start();
  }

  /** Sends a batch; `done` once the collector answered, the export gave up, or the thread is gone. */
  readonly send = (batch: SpanBatch, done: () => void): void => {
    const transfer = batch.scopes.map((scope) => scope.spans.buffer as ArrayBuffer);
    this.exported({ kind: 'export', spans: batch.spans, scopes: batch.scopes }, transfer, done);
  };

  /** Sends a request already encoded, whose memory goes with it; `done` with the error, if it failed. */
  sendRequest(bytes: Uint8Array, spans: number, done: (error: string | undefined) => void): void {
    this.exported({ kind: 'request', spans, bytes }, [bytes.buffer as ArrayBuffer], done);
  }

  private exported(ask: Ask, transfer: ArrayBuffer[], done: (error: string | undefined) => void): void {
    void this.ask(ask, transfer, false).then((error) => {
      done(error);
      if (error !== undefined) this.onError(new Error(error));
    });
  }

  /** Waits until what was sent is answered. */
  async flush(): Promise<void> {
    if (this.thread === undefined) return;
    const error = await this.ask({ kind: 'flush' }, [], true);
    if (error !== undefined) this.onError(new Error(error));
  }

  /** Sends what is waiting, then stops the thread. */
  async shutdown(): Promise<void> {
    this.closed = true;
    const thread = this.thread;
    if (thread === undefined) return;
    const error = await this.ask({ kind: 'shutdown' }, [], true);
    if (error !== undefined) this.onError(new Error(error));
    this.thread = undefined;
    await thread.terminate();
  }

  private start(): Worker {
    const thread = startThread({
      workerData: this.data,
      // A thread's environment takes strings only.
      env: Object.fromEntries(
        Object.entries({ ...process.env, ...this.env }).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string',
        ),
      ),
    });
    // Exports in flight do not keep the process alive; a flush and the shutdown do (`ask`).
    thread.unref();
    thread.on('error', (error) => this.onError(error));
    thread.on('exit', () => {
      if (this.thread === thread) {
        this.thread = undefined;
        this.stoppedAt = performance.now();
      }
      for (const [id, waiting] of this.waiting) {
        this.waiting.delete(id);
        this.answered(waiting, 'the trace export thread stopped');
      }
    });
    thread.on('message', (reply: ExportReply) => {
      const waiting = this.waiting.get(reply.id);
      if (waiting === undefined) return;
      this.waiting.delete(reply.id);
      this.answered(waiting, reply.error);
    });
    return thread;
  }

  private answered(waiting: Waiting, error: string | undefined): void {
    if (waiting.held && --this.held === 0) this.thread?.unref();
    waiting.resolve(error);
  }

  private ask(request: Ask, transfer: ArrayBuffer[], held: boolean): Promise<string | undefined> {
    if (this.thread === undefined && !this.closed && performance.now() - this.stoppedAt >= RESTART_MS)
      this.thread = this.start();
    const thread = this.thread;
    if (thread === undefined) return Promise.resolve('the trace export thread is not running');
    const id = ++this.next;
    return new Promise((resolve) => {
      this.waiting.set(id, { resolve, held });
      if (held && this.held++ === 0) thread.ref();
      thread.postMessage({ ...request, id } as ExportRequest, transfer);
    });
  }
}

/**
 * The export thread: the compiled entry beside this file or, where the server runs from its
 * TypeScript sources (tests, under tsx), the source through tsx's loader, which a thread does not
 * inherit from its parent.
 */
function startThread(options: WorkerOptions): Worker {
  const compiled = new URL('./exportThread.js', import.meta.url);
  if (existsSync(compiled)) return new Worker(compiled, options);
  const source = new URL('./exportThread.ts', import.meta.url).href;
  let loader: string;
  try {
    loader = import.meta.resolve('tsx/esm/api');
  } catch {
    // No tsx: the thread fails to load the source, and says so through its 'error' event.
    return new Worker(new URL(source), options);
  }
  const boot = `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(boot, { ...options, eval: true });
}
