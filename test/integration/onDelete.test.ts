import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGE_EVENTS } from '../../runtime/model/collections.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('deleting a referenced record: restrict, setNull, cascade', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  const post = async (path: string, body: unknown) => {
    const res = await server.call('POST', path, { token: admin.token, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data;
  };

  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
  });
  afterAll(() => server.close());

  it('refuses to delete a product that orders reference (restrict), naming them and how many', async () => {
    const product = await post('/api/v1/products', { name: 'Kept', sku: 'OD-1', price: 1, stock: 10 });
    const first = await post('/api/v1/orders', { product: product.id, quantity: 1 });
    await post('/api/v1/orders', { product: product.id, quantity: 2 });
    const refused = await server.call('DELETE', `/api/v1/products/${product.id}`, { token: admin.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CONFLICT');
    expect(refused.body.error.message).toMatch(/2 orders reference this Product through product/);
    expect(refused.body.error.details).toEqual({ orders: '2 records reference it through product' });
    expect((await server.call('GET', `/api/v1/products/${product.id}`, { token: admin.token })).status).toBe(200);
    const orders = await server.call('GET', `/api/v1/orders?product=${product.id}`, { token: admin.token });
    for (const order of orders.body.data.items)
      expect((await server.call('DELETE', `/api/v1/orders/${order.id}`, { token: admin.token })).status).toBe(200);
    expect(first.id).toBeDefined();
    expect((await server.call('DELETE', `/api/v1/products/${product.id}`, { token: admin.token })).status).toBe(200);
  });

  it('deletes the comments of a deleted article with it (cascade), each logged, and not on archive', async () => {
    const article = await post('/api/v1/articles', { title: 'Gone', body: 'b', status: 'published' });
    const comments = [
      await post('/api/v1/comments', { article: article.id, body: 'one' }),
      await post('/api/v1/comments', { article: article.id, body: 'two' }),
    ];
    const other = await post('/api/v1/articles', { title: 'Stays', body: 'b', status: 'published' });
    const kept = await post('/api/v1/comments', { article: other.id, body: 'kept' });
    // Archive does not cascade.
    await server.call('POST', `/api/v1/comments/${kept.id}/archive`, { token: admin.token });
    expect((await server.call('GET', `/api/v1/comments/${kept.id}`, { token: admin.token })).status).toBe(200);

    expect((await server.call('DELETE', `/api/v1/articles/${article.id}`, { token: admin.token })).status).toBe(200);
    for (const comment of comments)
      expect((await server.call('GET', `/api/v1/comments/${comment.id}`, { token: admin.token })).status).toBe(404);
    expect((await server.call('GET', `/api/v1/comments/${kept.id}`, { token: admin.token })).status).toBe(200);
    const events = await server.ctx.store.find(CHANGE_EVENTS, {
      where: { field: 'entity', op: 'eq', value: 'comments' },
      sort: [{ field: 'seq', direction: 'asc' }],
    });
    const deleted = events.filter((e) => e.event === 'deleted').map((e) => e.entityId);
    expect(deleted.sort()).toEqual(comments.map((c) => c.id).sort());
  });

  it('takes a deleted article out of the related lists that name it (setNull), with a version recorded', async () => {
    const target = await post('/api/v1/articles', { title: 'Target', body: 'b' });
    const keep = await post('/api/v1/articles', { title: 'Keep', body: 'b' });
    const pointing = await post('/api/v1/articles', { title: 'Pointing', body: 'b', related: [target.id, keep.id] });
    const versionsBefore = (
      await server.call('GET', `/api/v1/articles/${pointing.id}/versions`, { token: admin.token })
    ).body.total;
    expect((await server.call('DELETE', `/api/v1/articles/${target.id}`, { token: admin.token })).status).toBe(200);
    const after = await server.call('GET', `/api/v1/articles/${pointing.id}`, { token: admin.token });
    expect(after.body.data.related).toEqual([keep.id]);
    const versions = await server.call('GET', `/api/v1/articles/${pointing.id}/versions`, { token: admin.token });
    expect(versions.body.total).toBe(versionsBefore + 1);
    expect(versions.body.items[0].changeType).toBe('update');
  });
});
