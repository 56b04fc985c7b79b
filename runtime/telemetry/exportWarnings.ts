/** How a warning is written: the server's logger (`logger.warn(fields, message)`). */
export type Warn = (fields: Record<string, unknown>, message: string) => void;

/** At most one warning in this long. */
const QUIET_MS = 60_000;

/**
 * Failed exports and dropped spans, written as a warning when the first comes and then at most
 * once a minute (what came in between summed up), so a collector that is down is told once, not
 * with every batch.
 */
export class ExportWarnings {
  private failures = 0;
  private dropped = 0;
  private lastError = '';
  private quietUntil = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly warn: Warn,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** An export that failed (the transport's retries included). */
  readonly failed = (error: Error): void => {
    this.failures++;
    this.lastError = error.message;
    this.due();
  };

  /** Spans dropped because the queue was full. */
  readonly droppedSpans = (count: number): void => {
    this.dropped += count;
    this.due();
  };

  /**
   * The server's way down, once the last spans were sent: what came since the last warning (the
   * last export's failure included) is written now rather than lost with its timer; nothing after.
   */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.write();
    this.stopped = true;
  }

  private due(): void {
    if (this.stopped) return;
    const wait = this.quietUntil - this.now();
    if (wait <= 0) return this.write();
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write();
    }, wait);
    this.timer.unref();
  }

  private write(): void {
    if (this.failures === 0 && this.dropped === 0) return;
    const fields: Record<string, unknown> = { failedExports: this.failures, droppedSpans: this.dropped };
    if (this.failures > 0) fields.error = this.lastError;
    this.warn(
      fields,
      this.failures > 0 ? 'trace export failed: spans are not reaching the collector' : 'trace spans dropped',
    );
    this.failures = 0;
    this.dropped = 0;
    this.quietUntil = this.now() + QUIET_MS;
  }
}
