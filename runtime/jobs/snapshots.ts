import { JOB_SNAPSHOTS } from '../model/collections.js';
import type { Doc, Store } from '../store/types.js';
import { newId } from '../write/prepareWrite.js';

export interface MetricPoint {
  name: string;
  value: number;
  dimensions?: Record<string, string>;
}

/**
 * The bucket of a point: the hour it was captured in, in the job's timezone, as
 * `YYYY-MM-DDTHH` (2030-01-15T09 for 08:xx UTC in Europe/Berlin in winter).
 */
export function hourBucket(at: Date, timezone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}`;
}

/** Points a handler returned as `{ metrics: [...] }`; undefined when it returned none. */
export function metricPoints(result: unknown): MetricPoint[] | undefined {
  const metrics = (result as { metrics?: unknown } | null)?.metrics;
  if (metrics === undefined) return undefined;
  if (!Array.isArray(metrics)) throw new Error('metrics must be an array of { name, value, dimensions? }');
  return metrics.map((point, i) => {
    const { name, value, dimensions } = (point ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || !name || name.length > 200)
      throw new Error(`metrics[${i}].name must be a non-empty string`);
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new Error(`metrics[${i}].value must be a finite number`);
    if (
      dimensions !== undefined &&
      (typeof dimensions !== 'object' ||
        dimensions === null ||
        Object.values(dimensions).some((v) => typeof v !== 'string'))
    ) {
      throw new Error(`metrics[${i}].dimensions must map names to strings`);
    }
    return { name, value, ...(dimensions ? { dimensions: dimensions as Record<string, string> } : {}) };
  });
}

export function seriesOf(point: MetricPoint): string {
  const dimensions = Object.keys(point.dimensions ?? {})
    .sort()
    .map((key) => `${key}=${point.dimensions![key]}`);
  return [point.name, ...dimensions].join('|');
}

/** Stores the points as JobSnapshot records; refuses to grow a job past `maxSeries` distinct series. */
export async function storeSnapshots(
  store: Store,
  job: Doc,
  executionId: string,
  points: MetricPoint[],
  at: Date,
  maxSeries: number,
): Promise<number> {
  const known = new Set(
    (
      await store.find(JOB_SNAPSHOTS, {
        where: { field: 'jobId', op: 'eq', value: job.id },
        select: ['series'],
        limit: 100_000,
      })
    ).map((s) => s.series as string),
  );
  const fresh = new Set(points.map(seriesOf).filter((series) => !known.has(series)));
  if (known.size + fresh.size > maxSeries) {
    throw new Error(
      `job ${job.name} would have ${known.size + fresh.size} metric series; the cap is ${maxSeries} (jobs.maxSeriesPerJob)`,
    );
  }
  const stamp = at.toISOString();
  const bucket = hourBucket(at, (job.timezone as string) ?? 'UTC');
  await store.insertMany(
    JOB_SNAPSHOTS,
    points.map((point) => ({
      id: newId(),
      jobId: job.id,
      executionId,
      jobName: job.name,
      metric: point.name,
      value: point.value,
      dimensions: point.dimensions ?? {},
      series: seriesOf(point),
      bucket,
      capturedAt: stamp,
      createdAt: stamp,
      updatedAt: stamp,
    })),
  );
  return points.length;
}
