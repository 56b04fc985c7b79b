import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client.js';
import { registry } from '../../generated/index.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

// entities/orders.yaml declares POST /orders/{id}/approve (custom action approve, a body, a record
// answer) and GET /orders/summary (custom action report, a JSON answer); hooks/orders.ts handles them.
describe('custom endpoints', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let productId: string;
  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
    productId = (
      await server.call('POST', '/api/v1/products', {
        token: admin.token,
        body: { name: 'Chair', sku: 'C-1', price: 50, stock: 1000 },
      })
    ).body.data.id;
  });
  afterAll(() => server.close());

  const order = async (token: string) =>
    (await server.call('POST', '/api/v1/orders', { token, body: { product: productId, quantity: 1 } })).body.data;
  const approve = (token: string, id: string, body: unknown, headers: Record<string, string> = {}) =>
    server.call('POST', `/api/v1/orders/${id}/approve`, { token, body, headers });

  it('runs the handler in the pipeline and answers the record as GET shows it', async () => {
    const placed = await order(admin.token);
    const approved = await approve(admin.token, placed.id, { note: 'looks right' });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ id: placed.id, status: 'approved', note: 'looks right' });
    // The handler set a read-only field through its repository.
    expect(Date.parse(approved.body.data.approvedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(approved.headers.get('x-correlation-id')).toBeTruthy();
    // The handler's reject: an approved order cannot be approved again.
    const again = await approve(admin.token, placed.id, { note: 'twice' });
    expect(again.status).toBe(422);
    expect(again.body.error.details).toEqual({ status: 'must be placed' });
  });

  it("approves only through the endpoint: the order's hook stops a PATCH by the write's origin", async () => {
    const placed = await order(admin.token);
    const patched = await server.call('PATCH', `/api/v1/orders/${placed.id}`, {
      token: admin.token,
      body: { status: 'approved', note: 'sneaky' },
    });
    expect(patched.status).toBe(403);
    expect(patched.body.error.details).toEqual({ status: 'is set to approved by the approve endpoint' });
    // Nor may a client send the read-only approvedAt.
    const stamped = await server.call('PATCH', `/api/v1/orders/${placed.id}`, {
      token: admin.token,
      body: { approvedAt: new Date().toISOString() },
    });
    expect(stamped.status).toBe(400);
    expect((await approve(admin.token, placed.id, { note: 'proper' })).status).toBe(200);
  });

  it('validates the body with the generated validator, every field at once', async () => {
    const placed = await order(admin.token);
    expect((await approve(admin.token, placed.id, {})).body.error.details).toEqual({ note: 'is required' });
    expect((await approve(admin.token, placed.id, { note: '', extra: 1 })).body.error.details).toEqual({
      note: 'must be at least 1 characters',
      extra: 'is not allowed',
    });
    expect((await approve(admin.token, placed.id, 'x')).status).toBe(400);
    const query = await server.call('GET', '/api/v1/orders/summary?x=1', { token: admin.token });
    expect(query.body.error.details).toEqual({ x: 'is not a known query parameter' });
  });

  it('needs the custom action: 401 anonymous, 403 without it, granted by a role with its scope', async () => {
    const user = await server.user({ roles: ['USER'] });
    const mine = await order(user.token);
    expect((await server.call('POST', `/api/v1/orders/${mine.id}/approve`, { body: { note: 'n' } })).status).toBe(401);
    expect((await approve(user.token, mine.id, { note: 'n' })).status).toBe(403);
    const role = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'APPROVER', label: 'Approver', permissions: ['orders:view:own', 'orders:approve:own'] },
    });
    expect(role.status).toBe(201);
    const approver = await server.user({ roles: ['USER', 'APPROVER'] });
    const own = await order(approver.token);
    expect((await approve(approver.token, own.id, { note: 'mine' })).status).toBe(200);
    // Someone else's order is not visible to it: 404, as GET answers.
    expect((await approve(approver.token, mine.id, { note: 'theirs' })).status).toBe(404);
    const unknownAction = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'TYPO', label: 'Typo', permissions: ['orders:aprove'] },
    });
    expect(unknownAction.status).toBe(400);
    expect(unknownAction.body.error.details['permissions.0']).toContain('unknown action "aprove"');
  });

  it('is granted to an API key by its permission, and listed among the available permissions', async () => {
    const key = async (permissions: string[]) =>
      (
        await server.call('POST', '/api/v1/apikeys', {
          token: admin.token,
          body: { name: 'bot', permissions, expiresAt: '2099-01-01T00:00:00Z' },
        })
      ).body.data.token as string;
    const approving = await key(['orders:view', 'orders:create', 'orders:approve']);
    const placed = await order(admin.token);
    expect((await approve(approving, placed.id, { note: 'by key' })).status).toBe(200);
    const viewing = await key(['orders:view']);
    expect((await approve(viewing, (await order(admin.token)).id, { note: 'no' })).status).toBe(403);
    const available = (await server.call('GET', '/api/v1/roles/available-permissions', { token: admin.token })).body;
    const keys = available.map((p: { key: string }) => p.key);
    expect(keys).toEqual(
      expect.arrayContaining(['orders:approve', 'orders:approve:own', 'orders:approve:all', 'orders:report']),
    );
  });

  it('replays a repeated Idempotency-Key instead of running the handler again', async () => {
    const placed = await order(admin.token);
    const first = await approve(admin.token, placed.id, { note: 'once' }, { 'idempotency-key': 'approve-1' });
    const second = await approve(admin.token, placed.id, { note: 'once' }, { 'idempotency-key': 'approve-1' });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
  });

  it('serves a collection endpoint under its own action, answering JSON', async () => {
    const summary = await server.call('GET', '/api/v1/orders/summary', { token: admin.token });
    expect(summary.status).toBe(200);
    expect(summary.body.data).toEqual({ placed: expect.any(Number), approved: expect.any(Number), cancelled: 0 });
    expect(summary.body.data.approved).toBeGreaterThanOrEqual(3);
    const user = await server.user({ roles: ['USER'] });
    expect((await server.call('GET', '/api/v1/orders/summary', { token: user.token })).status).toBe(403);
  });

  it('is a method of the typed client, and an operation of the OpenAPI document', async () => {
    const client = createClient({ baseUrl: server.url, token: admin.token });
    const placed = await order(admin.token);
    const approved = await client.orders.approve(placed.id, { note: 'from the client' });
    expect(approved.status).toBe('approved');
    expect(await client.orders.summary()).toMatchObject({ cancelled: 0 });
    const openapi = (await server.call('GET', '/api/docs/openapi.json')).body;
    expect(openapi.paths['/api/v1/orders/{id}/approve'].post.operationId).toBe('orders_approve');
    expect(openapi.paths['/api/v1/orders/summary'].get.operationId).toBe('orders_summary');
  });
});

describe('a custom endpoint answering JSON', () => {
  it('never shows hidden fields or ciphertext of the records a handler returns, whole, spread or nested', async () => {
    const orders = registry.hooks.get('orders')!;
    const server = await startTestServer(
      {},
      {
        registry: {
          ...registry,
          hooks: new Map([
            ...registry.hooks,
            [
              'orders',
              {
                ...orders,
                endpoints: {
                  ...orders.endpoints,
                  // A handler that hands out records as its repositories read them.
                  async summary({ caller, repositories, present }: any) {
                    const me = await repositories.users.get(caller.user.id);
                    const [project] = await repositories.projects.find({});
                    return {
                      me,
                      spread: { ...me, extra: 1 },
                      nested: [{ deep: { project } }],
                      presented: present(me, 'users'),
                      presentedProject: present(project, 'projects'),
                    };
                  },
                },
              },
            ],
          ]),
        },
      },
    );
    try {
      const admin = await server.user({ roles: ['ADMIN'] });
      await server.ctx.store.update('users', admin.id, { passwordHash: 'argon2-hash', mfaSecret: 'sealed-secret' });
      const project = await server.call('POST', '/api/v1/projects', {
        token: admin.token,
        body: { name: 'Shown', code: 'SHOWN-1', deployToken: 'tok-plain-secret' },
      });
      expect(project.status).toBe(201);
      const answer = await server.call('GET', '/api/v1/orders/summary', { token: admin.token });
      expect(answer.status).toBe(200);
      const text = JSON.stringify(answer.body);
      for (const secret of ['argon2-hash', 'sealed-secret', 'passwordHash', 'mfaSecret', 'tok-plain-secret'])
        expect(text).not.toContain(secret);
      const { data } = answer.body;
      expect(data.me).toMatchObject({ id: admin.id, roles: ['ADMIN'] });
      expect(data.spread).toMatchObject({ id: admin.id, extra: 1 });
      expect(data.nested[0].deep.project.deployToken).toBe('[ENCRYPTED]');
      expect(data.presentedProject.deployToken).toBe('[ENCRYPTED]');
      expect(data.presented.id).toBe(admin.id);
      expect(data.presented).not.toHaveProperty('passwordHash');
    } finally {
      await server.close();
    }
  });
});
