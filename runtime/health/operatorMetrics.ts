import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { BusState } from '../cluster/busWatch.js';
import { KeyedHistogram } from './keyedHistogram.js';

/** Seconds: from a fast cached read to a slow list or upload. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/**
 * The numbers an operator scrapes from GET /api/metrics (Prometheus text format, prom-client):
 * requests by route and status with latency, store calls with latency, rate-limit refusals,
 * idempotency replays, job runs by handler and outcome, and the process (CPU, memory, event
 * loop, GC). One registry per server, so servers in one process never mix their numbers.
 * Labels come from the route table and fixed vocabularies, never from request text.
 */
export class OperatorMetrics {
  readonly registry = new Registry();
  private readonly requestSeconds = new KeyedHistogram(
    'entigen_http_request_duration_seconds',
    'HTTP request latency by method, route and status',
    REQUEST_BUCKETS,
    this.registry,
  );
  private readonly storeSeconds = new KeyedHistogram(
    'entigen_store_query_duration_seconds',
    'Store calls by operation and outcome',
    STORE_BUCKETS,
    this.registry,
  );
  private readonly refusals = new Counter({
    name: 'entigen_rate_limit_refusals_total',
    help: 'Requests refused with 429, by tier',
    labelNames: ['tier'],
    registers: [this.registry],
  });
  private readonly replays = new Counter({
    name: 'entigen_idempotency_replays_total',
    help: 'POST requests answered from a stored Idempotency-Key answer',
    registers: [this.registry],
  });
  private readonly jobRuns = new Counter({
    name: 'entigen_job_runs_total',
    help: 'Job runs by handler and outcome (completed, failed, cancelled)',
    labelNames: ['handler', 'status'],
    registers: [this.registry],
  });

  constructor() {
    this.requestSeconds.registerCount(
      this.registry,
      'entigen_http_requests_total',
      'HTTP requests by method, route and status',
    );
    collectDefaultMetrics({ register: this.registry, prefix: 'entigen_' });
  }

  /** A number read when the metrics are asked for (a cache's hits, a store's group commits). */
  watch(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  request(method: string, route: string, status: number, seconds: number): void {
    this.requestSeconds.observe(
      `${method} ${status} ${route}`,
      () => ({ method, route, status: String(status) }),
      seconds,
    );
  }

  storeCall(store: string, operation: string, outcome: 'ok' | 'error', seconds: number): void {
    this.storeSeconds.observe(`${store} ${outcome} ${operation}`, () => ({ store, operation, outcome }), seconds);
  }

  /** The bus between instances: whether it vouches for caches, how stale, and each channel. */
  watchCluster(read: () => BusState): void {
    this.watch(
      'entigen_cluster_bus_up',
      'Whether every notice of the other instances has surely arrived (1) or not (0)',
      () => (read().up ? 1 : 0),
    );
    this.watch(
      'entigen_cluster_bus_staleness_seconds',
      'Age of the newest proof that every notice arrived (-1: none yet)',
      () => {
        const { stalenessMs } = read();
        return stalenessMs === null ? -1 : stalenessMs / 1000;
      },
    );
    this.watch('entigen_cluster_peers', 'Other instances heard on the bus recently', () => read().peers);
    new Gauge({
      name: 'entigen_cluster_channel_subscribed',
      help: 'Whether the broker confirmed the subscription of each bus channel',
      labelNames: ['channel'],
      registers: [this.registry],
      collect() {
        for (const [channel, state] of Object.entries(read().channels)) this.set({ channel }, state.subscribed ? 1 : 0);
      },
    });
    new Gauge({
      name: 'entigen_cluster_channel_last_message_age_seconds',
      help: 'Seconds since a message arrived on each bus channel (-1: none since start)',
      labelNames: ['channel'],
      registers: [this.registry],
      collect() {
        for (const [channel, state] of Object.entries(read().channels))
          this.set({ channel }, state.lastMessageAgeMs === null ? -1 : state.lastMessageAgeMs / 1000);
      },
    });
  }

  rateLimited(tier: string): void {
    this.refusals.inc({ tier });
  }

  idempotencyReplayed(): void {
    this.replays.inc();
  }

  jobRun(handler: string, status: 'completed' | 'failed' | 'cancelled'): void {
    this.jobRuns.inc({ handler, status });
  }

  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
