import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGE_EVENTS } from '../../runtime/model/collections.js';
import { openSse } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('POST /api/v1/batch: many writes, one transaction', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let alice: { id: string; token: string };
  let bob: { id: string; token: string };
  const batch = (who: { token: string }, operations: unknown[], headers: Record<string, string> = {}) =>
    server.call('POST', '/api/v1/batch', { token: who.token, body: { operations }, headers });
  const count = async (plural: string) =>
    (await server.call('GET', `/api/v1/${plural}?limit=1`, { token: admin.token })).body.data.totalCount as number;

  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
    alice = await server.user();
    bob = await server.user();
  });
  afterAll(() => server.close());

  it('runs every kind of operation in order, later ones using earlier answers, each logged once', async () => {
    const res = await batch(admin, [
      { op: 'create', entity: 'products', body: { name: 'Kettle', sku: 'B-1', price: 20, stock: 5 } },
      { op: 'create', entity: 'orders', body: { product: '$0.id', quantity: 2 } },
      { op: 'endpoint', entity: 'orders', name: 'approve', id: '$1.id', body: { note: 'ok' } },
      { op: 'increment', entity: 'products', id: '$0.id', body: { stock: 10 } },
      { op: 'update', entity: 'products', id: '$0.id', body: { name: 'Kettle 2' } },
      { op: 'create', entity: 'notes', body: { title: 'Bin me' } },
      { op: 'delete', entity: 'notes', id: '$5.id' },
      { op: 'archive', entity: 'orders', id: '$1.id' },
      { op: 'restore', entity: 'orders', id: '$1.id' },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const results = res.body.data.results;
    expect(results.map((r: { status: number }) => r.status)).toEqual([201, 201, 200, 200, 200, 201, 200, 200, 200]);
    const product = results[0].body.data;
    expect(results[1].body.data).toMatchObject({ product: product.id, quantity: 2, total: 40 });
    expect(results[2].body.data).toMatchObject({ status: 'approved', note: 'ok' });
    // The order's hook took 2 off the stock, then the increment added 10, in the same transaction.
    expect(results[4].body.data).toMatchObject({ id: product.id, name: 'Kettle 2', stock: 13 });
    expect(results[6].body.data).toEqual({ id: results[5].body.data.id, deleted: true, trashed: true });
    const events = await server.ctx.store.find(CHANGE_EVENTS, {
      where: { field: 'entityId', op: 'in', value: [product.id, results[1].body.data.id] },
      sort: [{ field: 'seq', direction: 'asc' }],
    });
    expect(events.map((e) => `${e.entity}.${e.event}`)).toEqual([
      'products.created',
      // The order's hook takes its quantity off the stock.
      'products.incremented',
      'orders.created',
      'orders.updated',
      'products.incremented',
      'products.updated',
      'orders.archived',
      'orders.restored',
    ]);
  });

  it('tells realtime subscribers of every record once the batch commits', async () => {
    const stream = await openSse(`${server.url}/api/v1/realtime?entities=notes`, { token: admin.token });
    try {
      const res = await batch(admin, [
        { op: 'create', entity: 'notes', body: { title: 'Heard 1' } },
        { op: 'create', entity: 'notes', body: { title: 'Heard 2', follows: '$0.id' } },
      ]);
      const [first, second] = res.body.data.results.map((r: { body: { data: { id: string } } }) => r.body.data.id);
      await stream.next((e) => e.event === 'notes.created' && e.data.id === first);
      const heard = await stream.next((e) => e.event === 'notes.created' && e.data.id === second);
      expect(heard.data).toMatchObject({ title: 'Heard 2', follows: first });
    } finally {
      stream.close();
    }
  });

  it('stores nothing when one operation fails, and says which and why', async () => {
    const products = await count('products');
    const res = await batch(admin, [
      { op: 'create', entity: 'products', body: { name: 'Fine', sku: 'B-2', price: 1 } },
      { op: 'create', entity: 'products', body: { name: 'Also fine', sku: 'B-3', price: 1 } },
      { op: 'create', entity: 'products', body: { sku: 'B-4', price: -1 } },
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(/^Operation 2 \(create products\) failed, nothing was stored/);
    expect(res.body.error.details).toMatchObject({
      operation: '2',
      'operations.2.name': expect.any(String),
      'operations.2.price': expect.any(String),
    });
    expect(await count('products')).toBe(products);

    const clash = await batch(admin, [
      { op: 'create', entity: 'products', body: { name: 'One', sku: 'B-5', price: 1 } },
      { op: 'create', entity: 'products', body: { name: 'Two', sku: 'B-5', price: 1 } },
    ]);
    expect(clash.status).toBe(409);
    expect(clash.body.error.details).toMatchObject({ operation: '1', 'operations.1.sku': 'must be unique' });
    expect(await count('products')).toBe(products);
  });

  it('authorises each operation as if sent alone', async () => {
    const theirs = await server.call('POST', '/api/v1/projects', {
      token: admin.token,
      body: { name: 'P', code: 'B-P1' },
    });
    const mine = await server.call('POST', '/api/v1/articles', {
      token: alice.token,
      body: { title: 'Mine', body: 'b' },
    });
    expect(mine.status).toBe(201);
    const articles = await count('articles');
    const res = await batch(bob, [
      { op: 'create', entity: 'articles', body: { title: 'Bob', body: 'b' } },
      { op: 'update', entity: 'articles', id: mine.body.data.id, body: { title: 'Taken over' } },
    ]);
    expect(res.status).toBe(404);
    expect(res.body.error.details.operation).toBe('1');
    expect(await count('articles')).toBe(articles);
    const anonymous = await server.call('POST', '/api/v1/batch', {
      body: { operations: [{ op: 'create', entity: 'articles', body: { title: 'x', body: 'y' } }] },
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.details.operation).toBe('0');
    expect(theirs.status).toBe(201);
  });

  it('checks the whole batch before running any of it', async () => {
    const res = await batch(admin, [
      { op: 'create', entity: 'products', body: { name: 'x', sku: 'B-6', price: 1 } },
      { op: 'update', entity: 'nothings', id: 'a', body: {} },
      { op: 'update', entity: 'products', body: { name: 'no id' } },
      { op: 'create', entity: 'orders', body: { product: '$3.id', quantity: 1 } },
      { op: 'endpoint', entity: 'orders', name: 'fly', id: '$0.id' },
      { op: 'archive', entity: 'products', id: '$0.id', body: {} },
      { op: 'delete', entity: 'users', id: '$0.id' },
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({
      'operations.1.entity': '"nothings" is not an entity of this API',
      'operations.2.id': 'is required for update',
      'operations.3.body.product': '$3.id must name an earlier operation',
      'operations.4.name': 'must be one of approve, summary',
      'operations.5.body': 'is not for archive',
      'operations.6.entity': '"users" is not an entity of this API',
    });
    expect((await batch(admin, [])).status).toBe(400);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({
      op: 'create',
      entity: 'notes',
      body: { title: `n${i}` },
    }));
    expect((await batch(admin, tooMany)).status).toBe(400);
    const unknownKey = await batch(admin, [{ op: 'create', entity: 'notes', body: { title: 't' }, extra: 1 }]);
    expect(unknownKey.status).toBe(400);
  });

  it("answers a missing value of a reference as that operation's error", async () => {
    const res = await batch(admin, [
      { op: 'create', entity: 'notes', body: { title: 'first' } },
      { op: 'create', entity: 'notes', body: { title: '$0.nothing' } },
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error.details).toMatchObject({
      operation: '1',
      'operations.1.body.title': "$0.nothing: operation 0's answer has no nothing",
    });
  });

  it('replays the whole batch for a repeated Idempotency-Key, running it once', async () => {
    const notes = await count('notes');
    const operations = [
      { op: 'create', entity: 'notes', body: { title: 'once' } },
      { op: 'update', entity: 'notes', id: '$0.id', body: { pinned: true } },
    ];
    const first = await batch(admin, operations, { 'idempotency-key': 'batch-1' });
    const again = await batch(admin, operations, { 'idempotency-key': 'batch-1' });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await count('notes')).toBe(notes + 1);
  });
});
