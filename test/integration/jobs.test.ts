import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobContext, Scheduler } from '../../runtime/jobs/scheduler.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

let now = Date.UTC(2030, 0, 15, 7, 0, 0);
let server: TestServer;
let admin: { id: string; token: string };
const seen: { signalAborted?: boolean } = {};

const handlers = {
  hello: async () => ({ greeting: 'hi' }),
  text: async () => 'plain text output',
  boom: async () => {
    throw new Error('handler exploded');
  },
  slow: async ({ signal }: JobContext) => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    seen.signalAborted = signal.aborted;
    return 'too late';
  },
  metrics: async ({ job }: JobContext) => ({
    metrics: (job.metadata as { points: unknown[] } | null)?.points ?? [
      { name: 'signups', value: 3, dimensions: { plan: 'pro' } },
    ],
  }),
  counter: async ({ repositories }: JobContext) => ({
    articles: await (repositories as { articles: { count(): Promise<number> } }).articles.count(),
  }),
};

beforeAll(async () => {
  server = await startTestServer({}, { now: () => new Date(now), handlers });
  admin = await server.user({ roles: ['ADMIN'] });
});
afterAll(() => server.close());

const createJob = async (body: object) => server.call('POST', '/api/v1/scheduledJobs', { token: admin.token, body });
const job = async (id: string) =>
  (await server.call('GET', `/api/v1/scheduledJobs/${id}`, { token: admin.token })).body.data;
const executions = async (query: string) =>
  (await server.call('GET', `/api/v1/jobExecutions?${query}`, { token: admin.token })).body.data.items;
const tick = async () => {
  await server.scheduler.tick();
  await server.scheduler.idle();
};

describe('scheduled jobs', () => {
  it('applies the spec defaults, computes nextRunAt, and refuses bad schedules naming them', async () => {
    const res = await createJob({ name: 'Hello', handler: 'hello', scheduleType: 'interval', schedules: ['1m'] });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      timezone: 'UTC',
      enabled: true,
      timeout: 300000,
      failureCount: 0,
      nextRunAt: new Date(now + 60_000).toISOString(),
    });
    const bad = await createJob({
      name: 'Bad',
      handler: 'hello',
      scheduleType: 'cron',
      schedules: ['0 9 * * *', '99 * * * *'],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details['schedules.1']).toContain('"99 * * * *"');
    expect(
      (await createJob({ name: 'Bad', handler: 'hello', scheduleType: 'interval', schedules: ['often'] })).body.error
        .details['schedules.0'],
    ).toContain('"often"');
    expect(
      (
        await createJob({
          name: 'Bad',
          handler: 'hello',
          scheduleType: 'cron',
          schedules: ['0 9 * * *'],
          timezone: 'Mars/Base',
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await server.call('PATCH', `/api/v1/scheduledJobs/${res.body.data.id}`, {
          token: admin.token,
          body: { schedules: ['nope'] },
        })
      ).status,
    ).toBe(400);
  });

  it('evaluates cron in the job timezone', async () => {
    const res = await createJob({
      name: 'Berlin',
      handler: 'hello',
      scheduleType: 'cron',
      schedules: ['0 9 * * *'],
      timezone: 'Europe/Berlin',
    });
    expect(res.body.data.nextRunAt).toBe('2030-01-15T08:00:00.000Z');
  });

  it('runs a due job once: completed, output as a string, lastRunAt and nextRunAt moved, failures reset', async () => {
    const { id } = (await createJob({ name: 'Runs', handler: 'hello', scheduleType: 'interval', schedules: ['1m'] }))
      .body.data;
    await tick();
    expect(await executions(`jobId=${id}`)).toEqual([]);
    now += 61_000;
    await tick();
    await tick();
    const [run] = await executions(`jobId=${id}`);
    expect(run).toMatchObject({
      jobId: id,
      jobName: 'Runs',
      handler: 'hello',
      status: 'completed',
      output: '{"greeting":"hi"}',
      triggeredBy: 'scheduler',
      duration: 0,
    });
    expect(run.startedAt).toBe(new Date(now).toISOString());
    expect(await job(id)).toMatchObject({
      lastStatus: 'completed',
      failureCount: 0,
      lastRunAt: run.startedAt,
      nextRunAt: new Date(now + 60_000).toISOString(),
    });
  });

  it('counts consecutive failures, records the error, and resets on success', async () => {
    const { id } = (await createJob({ name: 'Flaky', handler: 'boom', scheduleType: 'interval', schedules: ['1m'] }))
      .body.data;
    for (let i = 0; i < 2; i++) {
      now += 61_000;
      await tick();
    }
    expect(await job(id)).toMatchObject({ failureCount: 2, lastStatus: 'failed', lastError: 'handler exploded' });
    const failed = await executions(`jobId=${id}&status=failed`);
    expect(failed).toHaveLength(2);
    expect(failed[0].error).toBe('handler exploded');
    await server.call('PATCH', `/api/v1/scheduledJobs/${id}`, { token: admin.token, body: { handler: 'text' } });
    now += 61_000;
    await tick();
    expect(await job(id)).toMatchObject({ failureCount: 0, lastStatus: 'completed', lastError: null });
    expect((await executions(`jobId=${id}&status=completed`))[0].output).toBe('plain text output');
  });

  it('cancels a run at its timeout: the signal fires and the timeout is the error', async () => {
    const { id } = (
      await createJob({ name: 'Slow', handler: 'slow', scheduleType: 'interval', schedules: ['1m'], timeout: 50 })
    ).body.data;
    now += 61_000;
    await tick();
    const [run] = await executions(`jobId=${id}`);
    expect(run).toMatchObject({ status: 'cancelled', error: 'Timed out after 50 ms' });
    expect(await job(id)).toMatchObject({ lastStatus: 'cancelled', failureCount: 1 });
    await new Promise((r) => setTimeout(r, 450));
    expect(seen.signalAborted).toBe(true);
  });

  it('never runs disabled jobs; an unknown handler is refused, and one gone since fails clearly', async () => {
    const off = (
      await createJob({ name: 'Off', handler: 'hello', scheduleType: 'interval', schedules: ['1m'], enabled: false })
    ).body.data;
    const refused = await createJob({ name: 'Ghost', handler: 'missing', scheduleType: 'interval', schedules: ['1m'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.handler).toBe(
      `"missing" is not a handler: jobs.handlers exports ${Object.keys(handlers).join(', ')}`,
    );
    const renamed = await server.call('PATCH', `/api/v1/scheduledJobs/${off.id}`, {
      token: admin.token,
      body: { handler: 'missing' },
    });
    expect(renamed.status).toBe(400);
    // A job stored before its handler left the module (written straight into the store).
    const ghost = await server.ctx.store.insert('scheduledJobs', {
      id: '0000000000000000000000aa',
      name: 'Ghost',
      handler: 'missing',
      scheduleType: 'interval',
      schedules: ['1m'],
      timezone: 'UTC',
      enabled: true,
      timeout: 300_000,
      failureCount: 0,
      origin: 'api',
      nextRunAt: new Date(now).toISOString(),
      createdAt: new Date(now).toISOString(),
      updatedAt: new Date(now).toISOString(),
    });
    now += 61_000;
    await tick();
    expect(await executions(`jobId=${off.id}`)).toEqual([]);
    expect((await executions(`jobId=${ghost.id}`))[0].error).toMatch(/No handler named "missing"/);
  });

  it('keeps jobName and handler on executions when the job is renamed or deleted', async () => {
    const { id } = (await createJob({ name: 'Before', handler: 'hello', scheduleType: 'interval', schedules: ['1m'] }))
      .body.data;
    now += 61_000;
    await tick();
    await server.call('PATCH', `/api/v1/scheduledJobs/${id}`, { token: admin.token, body: { name: 'After' } });
    await server.call('DELETE', `/api/v1/scheduledJobs/${id}`, { token: admin.token });
    expect((await executions(`jobId=${id}`))[0]).toMatchObject({ jobName: 'Before', handler: 'hello' });
  });

  it('runs manually for admins: 202, triggeredBy manual, the admin recorded', async () => {
    const { id } = (
      await createJob({ name: 'Manual', handler: 'counter', scheduleType: 'interval', schedules: ['1h'] })
    ).body.data;
    const res = await server.call('POST', `/api/v1/scheduledJobs/${id}/run`, { token: admin.token });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({
      jobId: id,
      status: 'running',
      triggeredBy: 'manual',
      triggeredByUserId: admin.id,
    });
    await server.scheduler.idle();
    const [run] = await executions(`jobId=${id}&triggeredBy=manual`);
    expect(run.status).toBe('completed');
    expect(JSON.parse(run.output)).toEqual({ articles: expect.any(Number) });
    const user = await server.user();
    expect((await server.call('POST', `/api/v1/scheduledJobs/${id}/run`, { token: user.token })).status).toBe(403);
    expect((await server.call('GET', '/api/v1/scheduledJobs', { token: user.token })).status).toBe(403);
    expect((await server.call('GET', '/api/v1/jobExecutions', { token: user.token })).status).toBe(403);
  });

  it('stores returned metric points as snapshots bucketed in the job timezone, with a cap on series', async () => {
    const { id } = (
      await createJob({
        name: 'Metrics',
        handler: 'metrics',
        scheduleType: 'interval',
        schedules: ['1m'],
        timezone: 'Europe/Berlin',
      })
    ).body.data;
    now += 61_000;
    await tick();
    const snapshots = (await server.call('GET', `/api/v1/jobSnapshots?jobId=${id}`, { token: admin.token })).body.data
      .items;
    const expectedHour = new Intl.DateTimeFormat('en-CA', {
      timeZone: 'Europe/Berlin',
      hour: '2-digit',
      hourCycle: 'h23',
    }).format(new Date(now));
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]).toMatchObject({
      metric: 'signups',
      value: 3,
      dimensions: { plan: 'pro' },
      series: 'signups|plan=pro',
      jobName: 'Metrics',
    });
    expect(snapshots[0].bucket).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2}T${expectedHour}$`));

    const many = Array.from({ length: 101 }, (_, i) => ({ name: 'm', value: i, dimensions: { n: String(i) } }));
    const capped = (
      await createJob({
        name: 'Too many',
        handler: 'metrics',
        scheduleType: 'interval',
        schedules: ['1m'],
        metadata: { points: many },
      })
    ).body.data;
    now += 61_000;
    await tick();
    const [run] = await executions(`jobId=${capped.id}`);
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/101 metric series; the cap is 100/);
  });

  it('filters jobs by the spec filters', async () => {
    const interval = await server.call('GET', '/api/v1/scheduledJobs?scheduleType=interval&enabled=false', {
      token: admin.token,
    });
    expect(interval.body.data.items.map((j: { name: string }) => j.name)).toEqual(['Off']);
    expect(
      (await server.call('GET', '/api/v1/scheduledJobs?handler=boom&name=Flaky', { token: admin.token })).status,
    ).toBe(200);
  });

  it('claims each due run once across schedulers sharing the store', async () => {
    const { id } = (await createJob({ name: 'Shared', handler: 'hello', scheduleType: 'interval', schedules: ['1m'] }))
      .body.data;
    const other = new Scheduler({ ctx: server.ctx, handlers, maxSeriesPerJob: 100 });
    now += 61_000;
    await Promise.all([server.scheduler.tick(), other.tick(), server.scheduler.tick(), other.tick()]);
    await Promise.all([server.scheduler.idle(), other.idle()]);
    expect(await executions(`jobId=${id}`)).toHaveLength(1);
  });

  it('marks a run failed when the instance running it died and its lease expired', async () => {
    const { id } = (await createJob({ name: 'Orphan', handler: 'hello', scheduleType: 'interval', schedules: ['1h'] }))
      .body.data;
    const stamp = new Date(now).toISOString();
    await server.ctx.store.insert('jobExecutions', {
      id: '0123456789abcdef01234567',
      jobId: id,
      jobName: 'Orphan',
      handler: 'hello',
      status: 'running',
      startedAt: stamp,
      triggeredBy: 'scheduler',
      createdAt: stamp,
      updatedAt: stamp,
    });
    await server.ctx.store.update('scheduledJobs', id, {
      leaseOwner: 'dead-instance',
      leaseUntil: new Date(now + 1000).toISOString(),
      lastStatus: 'running',
    });
    now += 2000;
    await tick();
    const [run] = await executions(`jobId=${id}`);
    expect(run).toMatchObject({ status: 'failed', error: expect.stringMatching(/lease expired/) });
    expect(await job(id)).toMatchObject({ lastStatus: 'failed', failureCount: 1 });
  });
});
