/** Counters kept in memory for the admin view of /api/health. */
export interface EndpointStats {
  count: number;
  totalMs: number;
  maxMs: number;
}

export interface CallStats {
  calls: number;
  errors: number;
  totalMs: number;
}

const MAX_ENDPOINTS = 1000;

export class Metrics {
  readonly startedAt = Date.now();
  requests = 0;
  errors = 0;
  clientErrors = 0;
  readonly endpoints = new Map<string, EndpointStats>();
  readonly externalCalls = new Map<string, CallStats>();

  recordRequest(endpoint: string, status: number, ms: number): void {
    this.requests++;
    if (status >= 500) this.errors++;
    else if (status >= 400) this.clientErrors++;
    let stats = this.endpoints.get(endpoint);
    if (!stats) {
      if (this.endpoints.size >= MAX_ENDPOINTS) return;
      stats = { count: 0, totalMs: 0, maxMs: 0 };
      this.endpoints.set(endpoint, stats);
    }
    stats.count++;
    stats.totalMs += ms;
    stats.maxMs = Math.max(stats.maxMs, ms);
  }

  /** Times a call to an outside service (LDAP, Redis) and counts its failures. */
  async track<T>(service: string, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const stats = this.externalCalls.get(service) ?? { calls: 0, errors: 0, totalMs: 0 };
    this.externalCalls.set(service, stats);
    stats.calls++;
    try {
      return await call();
    } catch (error) {
      stats.errors++;
      throw error;
    } finally {
      stats.totalMs += performance.now() - started;
    }
  }

  slowest(limit = 10) {
    return [...this.endpoints.entries()]
      .map(([endpoint, s]) => ({ endpoint, count: s.count, avgMs: round(s.totalMs / s.count), maxMs: round(s.maxMs) }))
      .sort((a, b) => b.avgMs - a.avgMs)
      .slice(0, limit);
  }

  external() {
    return Object.fromEntries(
      [...this.externalCalls.entries()].map(([name, s]) => [
        name,
        { calls: s.calls, errors: s.errors, avgMs: s.calls ? round(s.totalMs / s.calls) : 0 },
      ]),
    );
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

/** The process-wide metrics; LDAP calls are recorded here from wherever they happen. */
export const metrics = new Metrics();
