import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, servableApp } from '../support/cli.js';
import { adminToken, type SpawnedServer, spawnServer } from '../support/spawnServer.js';
import { testDatabaseUrl } from '../support/testServer.js';

// Server code (an endpoint's handler, a job, an afterCommit hook) sets read-only fields through
// its repositories, checked against their type and constraints; every hook is told where the
// write came from, so a guard can let an endpoint through and stop a client's PATCH.

const TICKETS = `version: 1
name: Ticket
plural: tickets
label: Tickets
base: owned
fields:
  title: { type: string, required: true, maxLength: 200 }
  status: { type: enum, values: [open, escalated, closed], default: open }
  # Only server code sets these.
  priority: { type: int, readOnly: true, min: 1, max: 5 }
  lastOrigin: { type: string, readOnly: true, maxLength: 100 }
endpoints:
  escalate:
    method: POST
    path: /{id}/escalate
    permission: escalate
    body:
      priority: { type: int, required: true }
    response: record
`;

const HOOKS = `import { defineHooks, reject } from '../generated/hooks.js';

export default defineHooks('tickets', {
  async beforeCreate({ data, origin }) {
    return { ...data, lastOrigin: origin };
  },
  async beforeUpdate({ data, existing, origin }) {
    if (data.status === 'escalated' && existing.status !== 'escalated' && origin !== 'endpoint:escalate')
      reject('FORBIDDEN', 'A ticket is escalated with POST /api/v1/tickets/{id}/escalate');
    return { ...data, lastOrigin: origin };
  },
  async afterCommit({ event, id, repositories }) {
    if (event === 'created') await repositories.tickets.update(id, { priority: 3 });
  },
  endpoints: {
    async escalate({ record, body, repositories }) {
      return (await repositories.tickets.update(record.id, { status: 'escalated', priority: body.priority })) ?? undefined;
    },
  },
});
`;

const JOB = `
/** Sets every open ticket's priority to 1 (a read-only field, through the repository). */
export async function calmDown({ repositories }: JobContext<Repositories>) {
  for (const ticket of await repositories.tickets.find({ filter: { status: 'open' } }))
    await repositories.tickets.update(ticket.id, { priority: 1 });
  return 'calmed';
}
`;

let server: SpawnedServer;
let admin: string;

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${admin}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function ticket(id: string) {
  return (await call('GET', `/api/v1/tickets/${id}`)).body.data;
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  const app = servableApp();
  writeFileSync(join(app, 'entities', 'tickets.yaml'), TICKETS);
  writeFileSync(join(app, 'hooks', 'tickets.ts'), HOOKS);
  appendFileSync(join(app, 'jobs', 'handlers.ts'), JOB);
  const config = join(app, 'entigen.config.yaml');
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replace('mcp: { enabled: true }', 'mcp: { enabled: true, readOnly: false }'),
  );
  const built = await runCli(['build'], app);
  expect(built.status, built.stderr).toBe(0);
  server = await spawnServer(
    {
      DATABASE_URL: testDatabaseUrl(mkdtempSync(join(tmpdir(), 'entigen-server-writes-'))),
      RATE_LIMIT_API: '100000/60',
      RATE_LIMIT_MCP: '100000/60',
    },
    app,
  );
  admin = await adminToken(server.url);
}, 180_000);
afterAll(() => server?.child.kill('SIGKILL'));

describe('server code writing read-only fields, and hooks told where a write came from', () => {
  it('lets an afterCommit hook and an endpoint set read-only fields, and a guard stop a client', async () => {
    const created = await call('POST', '/api/v1/tickets', { title: 'Printer on fire' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.lastOrigin).toBe('http');
    const id = created.body.data.id;
    // The afterCommit hook set the priority through its repository.
    const prioritised = await eventually(
      () => ticket(id),
      (t) => t.priority === 3,
    );
    expect(prioritised).toMatchObject({ priority: 3, lastOrigin: 'afterCommit:tickets' });

    // A client may neither send a read-only field nor escalate by PATCH.
    expect((await call('POST', '/api/v1/tickets', { title: 'x', priority: 5 })).status).toBe(400);
    const patched = await call('PATCH', `/api/v1/tickets/${id}`, { status: 'escalated' });
    expect(patched.status).toBe(403);
    expect(patched.body.error.message).toContain('/escalate');

    const escalated = await call('POST', `/api/v1/tickets/${id}/escalate`, { priority: 5 });
    expect(escalated.status, JSON.stringify(escalated.body)).toBe(200);
    expect(escalated.body.data).toMatchObject({ status: 'escalated', priority: 5, lastOrigin: 'endpoint:escalate' });
  });

  it('refuses a read-only value outside its constraints, storing nothing, and says why in the log', async () => {
    const { id } = (await call('POST', '/api/v1/tickets', { title: 'Too urgent' })).body.data;
    await eventually(
      () => ticket(id),
      (t) => t.priority === 3,
    );
    const refused = await call('POST', `/api/v1/tickets/${id}/escalate`, { priority: 9 });
    expect(refused.status).toBe(500);
    expect(refused.body.error.code).toBe('INTERNAL_ERROR');
    expect(await ticket(id)).toMatchObject({ status: 'open', priority: 3 });
    // The server's log line arrives through its stdout, a moment after the answer.
    const logged = await eventually(
      async () => server.output(),
      (output) => output.includes('repositories.tickets.update refused a read-only value'),
    );
    expect(logged).toContain('repositories.tickets.update refused a read-only value: priority');
  });

  it('tells the hooks of a batch, a job run and an agent where their writes came from', async () => {
    const { id } = (await call('POST', '/api/v1/tickets', { title: 'Slow wifi' })).body.data;
    await eventually(
      () => ticket(id),
      (t) => t.priority === 3,
    );
    const batch = await call('POST', '/api/v1/batch', {
      operations: [{ op: 'update', entity: 'tickets', id, body: { title: 'Slow wifi, 2nd floor' } }],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.data.results[0].body.data.lastOrigin).toBe('batch');

    const job = await call('POST', '/api/v1/scheduledJobs', {
      name: 'Calm down',
      handler: 'calmDown',
      scheduleType: 'interval',
      schedules: ['1h'],
    });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    expect((await call('POST', `/api/v1/scheduledJobs/${job.body.data.id}/run`)).status).toBe(202);
    const calmed = await eventually(
      () => ticket(id),
      (t) => t.priority === 1,
    );
    expect(calmed).toMatchObject({ priority: 1, lastOrigin: 'job:calmDown' });

    const client = new Client({ name: 'entigen-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${admin}` } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: 'tickets_update',
        arguments: { id, changes: { title: 'Slow wifi, fixed?' } },
      })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect((await ticket(id)).lastOrigin).toBe('mcp');
      // An agent is a client too: the guard stops its escalation.
      const refused = (await client.callTool({
        name: 'tickets_update',
        arguments: { id, changes: { status: 'escalated' } },
      })) as { isError?: boolean };
      expect(refused.isError).toBe(true);
      expect((await ticket(id)).status).toBe('open');
    } finally {
      await client.close();
    }
  });
});
