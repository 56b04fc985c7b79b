import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ExportWarnings } from './exportWarnings.js';

describe('export warnings', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('tell the first failure at once, then what came in a minute as one summary', () => {
    const written: { fields: Record<string, unknown>; message: string }[] = [];
    const warnings = new ExportWarnings(
      (fields, message) => written.push({ fields, message }),
      () => Date.now(),
    );
    warnings.failed(new Error('connect ECONNREFUSED 127.0.0.1:4318'));
    expect(written).toEqual([
      {
        fields: { failedExports: 1, droppedSpans: 0, error: 'connect ECONNREFUSED 127.0.0.1:4318' },
        message: 'trace export failed: spans are not reaching the collector',
      },
    ]);
    for (let i = 0; i < 5; i++) warnings.failed(new Error(`timeout ${i}`));
    warnings.droppedSpans(1);
    warnings.droppedSpans(1);
    vi.advanceTimersByTime(59_000);
    expect(written).toHaveLength(1);
    vi.advanceTimersByTime(1_000);
    expect(written[1]).toEqual({
      fields: { failedExports: 5, droppedSpans: 2, error: 'timeout 4' },
      message: 'trace export failed: spans are not reaching the collector',
    });
    // Nothing new: nothing written.
    vi.advanceTimersByTime(120_000);
    expect(written).toHaveLength(2);
    warnings.droppedSpans(3);
    expect(written[2]).toEqual({ fields: { failedExports: 0, droppedSpans: 3 }, message: 'trace spans dropped' });
  });

  it('write what is pending as they stop, and nothing more', () => {
    const written: Record<string, unknown>[] = [];
    const warnings = new ExportWarnings(
      (fields) => written.push(fields),
      () => Date.now(),
    );
    warnings.failed(new Error('down'));
    warnings.failed(new Error('still down'));
    warnings.droppedSpans(4);
    expect(written).toHaveLength(1);
    // The last export failed too: the server's last word on it is the summary, not silence.
    warnings.stop();
    expect(written[1]).toEqual({ failedExports: 1, droppedSpans: 4, error: 'still down' });
    warnings.failed(new Error('after'));
    vi.advanceTimersByTime(120_000);
    expect(written).toHaveLength(2);
    // Nothing pending: stopping writes nothing.
    const quiet: unknown[] = [];
    new ExportWarnings(() => quiet.push(1)).stop();
    expect(quiet).toEqual([]);
  });
});
