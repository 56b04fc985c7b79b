import type { Registry } from 'prom-client';

interface Series {
  labels: Record<string, string>;
  /** Observations per bucket, not cumulative: counts[i] fell in (bounds[i - 1], bounds[i]]. */
  counts: number[];
  sum: number;
  count: number;
}

/**
 * A line of the text format, as prom-client's own histograms and counters give them to the
 * registry (which prints `labels`, then `sharedLabels`).
 */
interface Sample {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
}

type RegisteredMetric = Parameters<Registry['registerMetric']>[0];

/**
 * A Prometheus histogram whose series the caller finds by one string key, registered in a
 * prom-client registry beside its own metrics and exported in the same text. prom-client's
 * observe() checks the label object's names and hashes it at every call, a few microseconds
 * that every request and every store call paid; here a call is one Map lookup. registerCount
 * exports the same series' counts as a counter (requests by route), and a registry's reset
 * empties both.
 */
export class KeyedHistogram {
  private readonly series = new Map<string, Series>();

  constructor(
    private readonly name: string,
    help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this.metric('histogram', name, help, () => this.samples()));
  }

  /** Counts `value` in the series of `key`; `labels` names that series the first time it is seen. */
  observe(key: string, labels: () => Record<string, string>, value: number): void {
    if (!Number.isFinite(value)) return;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: labels(), counts: new Array(this.bounds.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    if (i < bounds.length) series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  /** A counter named `name` of the observations in each series. */
  registerCount(registry: Registry, name: string, help: string): void {
    registry.registerMetric(
      this.metric('counter', name, help, () =>
        [...this.series.values()].map(({ labels, count }) => ({ labels, value: count })),
      ),
    );
  }

  private samples(): Sample[] {
    const out: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.series.values()) {
      let seen = 0;
      this.bounds.forEach((le, i) => {
        seen += counts[i];
        out.push({ labels: { le }, sharedLabels: labels, value: seen, metricName: bucket });
      });
      out.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: bucket });
      out.push({ labels: {}, sharedLabels: labels, value: sum, metricName: `${this.name}_sum` });
      out.push({ labels: {}, sharedLabels: labels, value: count, metricName: `${this.name}_count` });
    }
    return out;
  }

  /** What a registry asks of a metric: its samples (get, in prom-client's shape), and reset. */
  private metric(type: 'histogram' | 'counter', name: string, help: string, values: () => Sample[]): RegisteredMetric {
    const metric = {
      name,
      help,
      // The registry may rename a counter (OpenMetrics): the samples carry the name it holds.
      get: async () => ({ name: metric.name, help, type, values: values(), aggregator: 'sum' }),
      reset: () => this.series.clear(),
    };
    // The registry's type names prom-client's own classes; it reads only these members.
    return metric as unknown as RegisteredMetric;
  }
}
