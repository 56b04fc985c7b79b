import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { KeyedHistogram } from './keyedHistogram.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const observations: [string, string, number][] = [
  ['GET', '/api/v1/articles', 0.0004],
  ['GET', '/api/v1/articles', 0.001],
  ['GET', '/api/v1/articles', 0.05],
  ['POST', '/api/v1/articles', 3],
  ['GET', '/api/v1/a"b\\c', 0.2],
  ['GET', '/api/v1/articles', 0.0100001],
];

/** The same observations through prom-client's own histogram and counter. */
function promClientText(): Promise<string> {
  const registry = new Registry();
  const histogram = new Histogram({
    name: 'x_seconds',
    help: 'latency',
    labelNames: ['method', 'route'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const counter = new Counter({
    name: 'x_total',
    help: 'requests',
    labelNames: ['method', 'route'],
    registers: [registry],
  });
  for (const [method, route, value] of observations) {
    histogram.observe({ method, route }, value);
    counter.inc({ method, route });
  }
  return registry.metrics();
}

describe('a keyed histogram', () => {
  it('exports exactly what prom-client exports for the same observations, with its counts as a counter', async () => {
    const registry = new Registry();
    const histogram = new KeyedHistogram('x_seconds', 'latency', BUCKETS, registry);
    histogram.registerCount(registry, 'x_total', 'requests');
    for (const [method, route, value] of observations)
      histogram.observe(`${method} ${route}`, () => ({ method, route }), value);
    const text = await registry.metrics();
    expect(text).toBe(await promClientText());
    expect(text).toContain('x_seconds_bucket{le="0.01",method="GET",route="/api/v1/articles"} 2');
    expect(text).toContain('x_total{method="POST",route="/api/v1/articles"} 1');
    expect(text).toContain('route="/api/v1/a\\"b\\\\c"');
  });

  it('is emptied with the registry, and ignores a value that is not a number', async () => {
    const registry = new Registry();
    const histogram = new KeyedHistogram('y_seconds', 'latency', BUCKETS, registry);
    histogram.observe('a', () => ({ route: 'a' }), Number.NaN);
    expect(await registry.metrics()).not.toContain('y_seconds_count');
    histogram.observe('a', () => ({ route: 'a' }), 0.5);
    expect(await registry.metrics()).toContain('y_seconds_count{route="a"} 1');
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('y_seconds_count');
  });
});
