import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

const TOKEN = 'scrape-token-0123456789';
let server: TestServer;
let admin: { id: string; token: string };

beforeAll(async () => {
  server = await startTestServer(
    { METRICS_TOKEN: TOKEN },
    {
      overrides: { rateLimit: { ...GENEROUS_LIMITS, public: { limit: 3, window: 60 } } },
      handlers: {
        tidy: async () => 'tidied',
        broken: async () => {
          throw new Error('no');
        },
      },
    },
  );
  admin = await server.user({ roles: ['ADMIN'] });
});
afterAll(() => server.close());

/** The value of one sample line, `name{labels} value`, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) continue;
    return Number(line.split(' ').at(-1));
  }
  return undefined;
}

const scrape = async (authorization?: string) => {
  const res = await fetch(`${server.url}/api/metrics`, { headers: authorization ? { authorization } : {} });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};

describe('GET /api/metrics', () => {
  it('answers only the scrape token or an administrator, with the envelope otherwise', async () => {
    const anonymous = await scrape();
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.text).error.code).toBe('UNAUTHORIZED');
    expect((await scrape('Bearer wrong-token-0123456789')).status).toBe(401);
    const user = await server.user();
    expect((await scrape(`Bearer ${user.token}`)).status).toBe(403);
    const byAdmin = await scrape(`Bearer ${admin.token}`);
    expect(byAdmin.status).toBe(200);
    const byToken = await scrape(`Bearer ${TOKEN}`);
    expect(byToken.status).toBe(200);
    expect(byToken.type).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('counts requests by route and status with latency, store calls, refusals, replays, job runs and the process', async () => {
    await server.call('GET', '/api/v1/articles', { token: admin.token });
    await server.call('GET', `/api/v1/articles/${'0'.repeat(24)}`, { token: admin.token });
    const post = () =>
      server.call('POST', '/api/v1/articles', {
        token: admin.token,
        headers: { 'Idempotency-Key': 'metrics-1' },
        body: { title: 't', body: 'b' },
      });
    await post();
    expect((await post()).headers.get('idempotency-replayed')).toBe('true');
    const anonymous = [];
    for (let i = 0; i < 5; i++) anonymous.push((await server.call('GET', '/api/v1/articles')).status);
    expect(anonymous).toContain(429);
    for (const handler of ['tidy', 'broken']) {
      const job = await server.call('POST', '/api/v1/scheduledJobs', {
        token: admin.token,
        body: { name: handler, handler, scheduleType: 'interval', schedules: ['1h'] },
      });
      await server.call('POST', `/api/v1/scheduledJobs/${job.body.data.id}/run`, { token: admin.token });
    }
    await server.scheduler.idle();

    const { text } = await scrape(`Bearer ${TOKEN}`);
    expect(
      sample(text, 'entigen_http_requests_total', { method: 'GET', route: '/api/v1/articles', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'entigen_http_requests_total', { route: '/api/v1/articles/:id', status: '404' })).toBe(1);
    expect(
      sample(text, 'entigen_http_request_duration_seconds_count', { route: '/api/v1/articles/:id', status: '404' }),
    ).toBe(1);
    expect(
      sample(text, 'entigen_http_request_duration_seconds_bucket', { route: '/api/v1/articles/:id', le: '+Inf' }),
    ).toBe(1);
    expect(
      sample(text, 'entigen_store_query_duration_seconds_count', { operation: 'find', outcome: 'ok' }),
    ).toBeGreaterThan(0);
    expect(sample(text, 'entigen_rate_limit_refusals_total', { tier: 'public' })).toBe(2);
    expect(sample(text, 'entigen_idempotency_replays_total')).toBe(1);
    // Answers given before routing (a replay, a refusal) carry their route too.
    expect(
      sample(text, 'entigen_http_requests_total', { method: 'POST', route: '/api/v1/articles', status: '201' }),
    ).toBe(2);
    expect(sample(text, 'entigen_http_requests_total', { route: '/api/v1/articles', status: '429' })).toBe(2);
    expect(sample(text, 'entigen_job_runs_total', { handler: 'tidy', status: 'completed' })).toBe(1);
    expect(sample(text, 'entigen_job_runs_total', { handler: 'broken', status: 'failed' })).toBe(1);
    expect(sample(text, 'entigen_process_cpu_seconds_total')).toBeGreaterThan(0);
    // The read cache is on where every write can be heard (SQLite, PostgreSQL; MongoDB only with Redis).
    if (server.ctx.store.kind !== 'mongo') expect(sample(text, 'entigen_read_cache_hits')).toBeGreaterThan(0);
    else expect(sample(text, 'entigen_read_cache_hits')).toBeUndefined();
    expect(sample(text, 'entigen_mails_sent')).toBe(0);
    if (server.ctx.store.kind === 'sqlite') {
      // Every write above committed, some of them together.
      expect(sample(text, 'entigen_group_commits')).toBeGreaterThan(0);
      expect(sample(text, 'entigen_group_commit_transactions')).toBeGreaterThanOrEqual(
        sample(text, 'entigen_group_commits') ?? Number.POSITIVE_INFINITY,
      );
    }
    expect(sample(text, 'entigen_nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    // Labels come from the route table, never from the request: an unknown path is one series.
    await server.call('GET', '/api/v1/nowhere-abc');
    await server.call('GET', '/api/v1/nowhere-xyz');
    const after = (await scrape(`Bearer ${TOKEN}`)).text;
    expect(after).not.toContain('nowhere');
  });

  it('refuses a scrape token shorter than 16 characters at start', async () => {
    await expect(startTestServer({ METRICS_TOKEN: 'short' })).rejects.toThrow(/at least 16 characters/);
  });
});
