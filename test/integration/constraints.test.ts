import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('field constraints (entities/products.yaml, orders.yaml)', () => {
  let server: TestServer;
  let admin: { token: string };
  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
  });
  afterAll(() => server.close());

  const call = (method: string, path: string, body?: unknown) =>
    server.call(method, path, { token: admin.token, body });
  const valid = { name: 'Desk', sku: 'D-1', price: 120, stock: 3 };

  it('refuses every broken constraint of a create at once, naming each field', async () => {
    const refused = await call('POST', '/api/v1/products', {
      name: '',
      sku: 'no spaces!',
      price: -1,
      stock: -2,
      supplierEmail: 'not-an-address',
      tags: Array.from({ length: 11 }, (_, i) => `t${i}`),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.details).toEqual({
      name: 'must be at least 1 characters',
      sku: 'must match the pattern ^[A-Za-z0-9.-]+$',
      price: 'must be at least 0',
      stock: 'must be at least 0',
      supplierEmail: 'must be an email address',
      tags: 'must hold at most 10 items',
    });
  });

  it('checks array items, updates and bulk items the same way', async () => {
    const long = await call('POST', '/api/v1/products', { ...valid, sku: 'D-2', tags: ['x'.repeat(31)] });
    expect(long.body.error.details).toEqual({ 'tags.0': 'must be at most 30 characters' });
    const product = (await call('POST', '/api/v1/products', { ...valid, sku: 'D-3', supplierEmail: 'a@b.example' }))
      .body.data;
    expect(product).toMatchObject({ price: 120, supplierEmail: 'a@b.example' });
    const patched = await call('PATCH', `/api/v1/products/${product.id}`, { price: -5 });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details).toEqual({ price: 'must be at least 0' });
    const bulk = await call('POST', '/api/v1/orders/bulk', { items: [{ product: product.id, quantity: 1001 }] });
    expect(bulk.status).toBe(400);
    expect(bulk.body.error.details).toEqual({ 'items.0.quantity': 'must be at most 1000' });
  });

  it('holds an increment’s result to min and max, changing nothing when it would break them', async () => {
    const product = (await call('POST', '/api/v1/products', { ...valid, sku: 'D-4', stock: 5 })).body.data;
    const refused = await call('PATCH', `/api/v1/products/${product.id}/increment`, { stock: -6 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual({ stock: 'must be at least 0; the increment would make it -1' });
    expect((await call('GET', `/api/v1/products/${product.id}`)).body.data.stock).toBe(5);
    expect((await call('PATCH', `/api/v1/products/${product.id}/increment`, { stock: -5 })).body.data.stock).toBe(0);
  });

  it('shows the constraints in the field metadata and in the OpenAPI document', async () => {
    const fields = (await call('GET', '/api/v1/schema/metadata/products')).body.data.fields;
    const byName = Object.fromEntries(fields.map((f: { name: string }) => [f.name, f]));
    expect(byName.price.constraints).toEqual({ min: 0 });
    expect(byName.sku.constraints).toEqual({ pattern: '^[A-Za-z0-9.-]+$', maxLength: 40 });
    expect(byName.tags.constraints).toEqual({ maxItems: 10, items: { maxLength: 30 } });
    expect(byName.createdAt.constraints).toBeUndefined();
    const openapi = (await call('GET', '/api/docs/openapi.json')).body;
    const create =
      openapi.components.schemas.ProductCreate ??
      openapi.paths['/api/v1/products'].post.requestBody.content['application/json'].schema;
    expect(JSON.stringify(create)).toContain('"minimum":0');
  });
});
