import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

/** The example app declares FULFILMENT under `roles:` in entigen.config.yaml. */
describe('roles declared in the app’s files', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  beforeAll(async () => {
    server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS } });
    admin = (await server.user({ roles: ['ADMIN'] })) as { id: string; token: string };
  });
  afterAll(() => server.close());

  const call = (method: string, path: string, body?: unknown, token = admin.token) =>
    server.call(method, path, { token, body });
  const role = async (key: string) =>
    (await call('GET', '/api/v1/roles')).body.items.find((r: { key: string }) => r.key === key);

  it('exist from the first start, listed with origin "file" and the config’s label and permissions', async () => {
    expect(await role('FULFILMENT')).toMatchObject({
      key: 'FULFILMENT',
      label: 'Fulfilment',
      description: 'Sees every order and approves placed ones; sees the products',
      permissions: ['orders:view:all', 'orders:approve:all', 'products:view'],
      isBuiltin: false,
      isSystem: false,
      origin: 'file',
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
    });
    expect((await role('USER')).origin).toBe('builtin');
  });

  it('can be assigned at once, and its permissions hold', async () => {
    const made = await call('POST', '/api/v1/users', {
      email: 'picker@example.test',
      displayName: 'Picker',
      roles: ['FULFILMENT'],
    });
    expect(made.status).toBe(201);
    const picker = await server.user({ roles: ['FULFILMENT'] });
    const customer = await server.user({ roles: ['USER'] });
    const product = (
      await call('POST', '/api/v1/products', { name: 'Desk', sku: `D-${Math.random()}`, price: 100, stock: 5 })
    ).body.data;
    const order = (await call('POST', '/api/v1/orders', { product: product.id, quantity: 1 }, customer.token)).body
      .data;
    expect((await call('GET', `/api/v1/orders/${order.id}`, undefined, picker.token)).status).toBe(200);
    const approved = await call('POST', `/api/v1/orders/${order.id}/approve`, { note: 'packed' }, picker.token);
    expect(approved.status).toBe(200);
    expect(approved.body.data.status).toBe('approved');
    expect((await call('PATCH', `/api/v1/orders/${order.id}`, { note: 'x' }, picker.token)).status).toBe(403);
  });

  it('is overridden by a stored role of the same key, keeps its id, and comes back when that is deleted', async () => {
    const before = await role('FULFILMENT');
    const override = await call('PUT', '/api/v1/roles/FULFILMENT', { permissions: ['orders:view:all'] });
    expect(override.status).toBe(200);
    expect(override.body).toMatchObject({ id: before.id, origin: 'stored', permissions: ['orders:view:all'] });
    expect((await call('DELETE', '/api/v1/roles/FULFILMENT')).status).toBe(200);
    expect(await role('FULFILMENT')).toEqual(before);
    const again = await call('DELETE', '/api/v1/roles/FULFILMENT');
    expect(again.status).toBe(422);
    expect(again.body.error.message).toContain('entigen.config.yaml');
  });
});
