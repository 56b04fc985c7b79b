import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { fileJobId, reconcileFileSchedules } from '../../runtime/jobs/fileSchedules.js';
import { TRASH_PURGE_HANDLER, trashPurgeSchedule } from '../../runtime/jobs/trashPurge.js';
import type { JobScheduleModel } from '../../runtime/model/types.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const nightly: JobScheduleModel = {
  name: 'nightlyClose',
  handler: 'closeResolved',
  scheduleType: 'cron',
  schedules: ['0 2 * * *'],
  timezone: 'Europe/Berlin',
  timeout: '10m',
  description: 'Closes resolved tickets',
  enabled: true,
};
/** The example app keeps a trash, so the server declares its purge job beside the file's. */
const purge = trashPurgeSchedule(registry.model)!;
const ran: string[] = [];
const handlers = {
  closeResolved: async () => {
    ran.push('closeResolved');
    return 'closed';
  },
  remind: async () => 'reminded',
};

/** The example app, as if its config declared `jobs.schedules.nightlyClose`. */
const withSchedules = (jobSchedules: JobScheduleModel[]) => ({
  ...registry,
  model: { ...registry.model, jobSchedules },
});

describe('scheduled jobs declared in entigen.config.yaml', () => {
  let server: TestServer;
  let admin: { token: string };
  const now = () => new Date('2026-03-01T10:00:00.000Z');
  beforeAll(async () => {
    server = await startTestServer({}, { registry: withSchedules([nightly]), handlers, now });
    admin = await server.user({ roles: ['ADMIN'] });
  });
  afterAll(() => server.close());

  const call = (method: string, path: string, body?: unknown) =>
    server.call(method, path, { token: admin.token, body });
  const byName = async (name: string) =>
    (await call('GET', `/api/v1/scheduledJobs?name=${name}`)).body.data.items as Record<string, unknown>[];

  it('exists from the start with the file’s settings and origin "file"', async () => {
    const [job] = await byName('nightlyClose');
    expect(job).toMatchObject({
      id: fileJobId('nightlyClose'),
      handler: 'closeResolved',
      scheduleType: 'cron',
      schedules: ['0 2 * * *'],
      timezone: 'Europe/Berlin',
      timeout: 600_000,
      description: 'Closes resolved tickets',
      enabled: true,
      origin: 'file',
      // 02:00 in Berlin (UTC+1 in March) is 01:00 UTC, the next day.
      nextRunAt: '2026-03-02T01:00:00.000Z',
    });
  });

  it('may be run and its executions listed, but not changed or deleted over the API (409 naming the file)', async () => {
    const id = fileJobId('nightlyClose');
    const run = await call('POST', `/api/v1/scheduledJobs/${id}/run`);
    expect(run.status).toBe(202);
    await server.scheduler.idle();
    expect(ran).toEqual(['closeResolved']);
    const executions = (await call('GET', `/api/v1/jobExecutions?jobId=${id}`)).body.data.items;
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({ status: 'completed', triggeredBy: 'manual' });
    const changed = await call('PATCH', `/api/v1/scheduledJobs/${id}`, { schedules: ['0 3 * * *'], enabled: false });
    expect(changed.status).toBe(409);
    expect(changed.body.error.message).toContain('entigen.config.yaml');
    expect(changed.body.error.details).toEqual({
      schedules: 'is set by entigen.config.yaml',
      enabled: 'is set by entigen.config.yaml',
    });
    // The same values again change nothing, so they pass.
    expect((await call('PATCH', `/api/v1/scheduledJobs/${id}`, { timezone: 'Europe/Berlin' })).status).toBe(200);
    const removed = await call('DELETE', `/api/v1/scheduledJobs/${id}`);
    expect(removed.status).toBe(409);
    expect(removed.body.error.message).toContain('remove it there');
    expect((await call('POST', '/api/v1/scheduledJobs', { name: 'x', handler: 'origin', origin: 'file' })).status).toBe(
      400,
    );
  });

  it('follows the file at the next start: changed settings, a job taken over by name, a removed one released', async () => {
    const made = await call('POST', '/api/v1/scheduledJobs', {
      name: 'reminders',
      handler: 'remind',
      scheduleType: 'interval',
      schedules: ['1h'],
    });
    expect(made.status).toBe(201);
    const reminders: JobScheduleModel = {
      name: 'reminders',
      handler: 'remind',
      scheduleType: 'interval',
      schedules: ['30m'],
      timezone: 'UTC',
      enabled: true,
    };
    const later = new Date('2026-03-01T12:00:00.000Z');
    const changedNightly = { ...nightly, schedules: ['0 4 * * *'], timeout: undefined };
    const names = [...Object.keys(handlers), TRASH_PURGE_HANDLER];
    const outcome = await reconcileFileSchedules(server.ctx.store, [changedNightly, reminders, purge], names, later);
    expect(outcome).toEqual({ created: [], updated: ['nightlyClose', 'reminders'], released: [] });
    expect((await byName('nightlyClose'))[0]).toMatchObject({
      schedules: ['0 4 * * *'],
      timeout: 300_000,
      nextRunAt: '2026-03-02T03:00:00.000Z',
    });
    expect((await byName('reminders'))[0]).toMatchObject({ id: made.body.data.id, origin: 'file', schedules: ['30m'] });
    // Unchanged: nothing written.
    expect(await reconcileFileSchedules(server.ctx.store, [changedNightly, reminders, purge], names, later)).toEqual({
      created: [],
      updated: [],
      released: [],
    });
    // Removed from the file: disabled, the API's now, its executions kept.
    expect(await reconcileFileSchedules(server.ctx.store, [reminders, purge], names, later)).toEqual({
      created: [],
      updated: [],
      released: ['nightlyClose'],
    });
    const released = (await byName('nightlyClose'))[0];
    expect(released).toMatchObject({ enabled: false, origin: 'api' });
    expect((await call('GET', `/api/v1/jobExecutions?jobId=${released.id}`)).body.data.items).toHaveLength(1);
    expect((await call('DELETE', `/api/v1/scheduledJobs/${released.id}`)).status).toBe(200);
  });

  it('refuses to start when a declared handler is not exported', async () => {
    await expect(
      startTestServer({}, { registry: withSchedules([{ ...nightly, handler: 'closeResolvd' }]), handlers }),
    ).rejects.toThrow(/nightlyClose -> closeResolvd \(exports: closeResolved, remind, entigenTrashPurge\)/);
  });
});
