import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import type { Caller } from '../../runtime/context/caller.js';
import type { EntityHooks } from '../../runtime/context/hookTypes.js';
import { reject } from '../../runtime/context/reject.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

/** The example app, with extra hooks on articles for one test server. */
function withHooks(extra: Record<string, EntityHooks>) {
  return { ...registry, hooks: new Map([...registry.hooks, ...Object.entries(extra)]) };
}

describe('the example app: an order takes its quantity off the stock in one transaction', () => {
  let server: TestServer;
  let admin: { token: string };
  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
  });
  afterAll(() => server.close());

  const product = async (stock: number) =>
    (
      await server.call('POST', '/api/v1/products', {
        token: admin.token,
        body: { name: 'Lamp', sku: `L-${Math.random()}`, price: 10, stock },
      })
    ).body.data;
  const stockOf = async (id: string) =>
    (await server.call('GET', `/api/v1/products/${id}`, { token: admin.token })).body.data.stock;
  const orders = async (productId: string) =>
    (await server.call('GET', `/api/v1/orders?product=${productId}`, { token: admin.token })).body.data.items;

  it('commits the order and the stock decrement together', async () => {
    const lamp = await product(5);
    const placed = await server.call('POST', '/api/v1/orders', {
      token: admin.token,
      body: { product: lamp.id, quantity: 2 },
    });
    expect(placed.status).toBe(201);
    expect(placed.body.data).toMatchObject({ product: lamp.id, quantity: 2, status: 'placed' });
    expect(await stockOf(lamp.id)).toBe(3);
  });

  it('refuses an order beyond the stock with the hook’s 409 and details, and stores neither part', async () => {
    const lamp = await product(1);
    const refused = await server.call('POST', '/api/v1/orders', {
      token: admin.token,
      body: { product: lamp.id, quantity: 3 },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual({
      code: 'CONFLICT',
      message: 'Only 1 of Lamp in stock',
      details: { quantity: 'must be at most 1' },
    });
    expect(await stockOf(lamp.id)).toBe(1);
    expect(await orders(lamp.id)).toEqual([]);
  });

  it('answers a rule of the hook with 400 naming the field', async () => {
    const lamp = await product(4);
    const refused = await server.call('POST', '/api/v1/orders', {
      token: admin.token,
      body: { product: lamp.id, quantity: 0 },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual({ quantity: 'must be at least 1' });
  });

  it('gives the stock back when an order is cancelled, and refuses a changed quantity with 422', async () => {
    const lamp = await product(4);
    const order = (
      await server.call('POST', '/api/v1/orders', { token: admin.token, body: { product: lamp.id, quantity: 3 } })
    ).body.data;
    expect(await stockOf(lamp.id)).toBe(1);
    const changed = await server.call('PATCH', `/api/v1/orders/${order.id}`, {
      token: admin.token,
      body: { quantity: 1 },
    });
    expect(changed.status).toBe(422);
    expect(changed.body.error.details).toEqual({ quantity: 'cannot change' });
    const cancelled = await server.call('PATCH', `/api/v1/orders/${order.id}`, {
      token: admin.token,
      body: { status: 'cancelled' },
    });
    expect(cancelled.status).toBe(200);
    expect(await stockOf(lamp.id)).toBe(4);
  });

  it('bulk: one refused item stores none, and the refusal names the item', async () => {
    const lamp = await product(2);
    const bulk = await server.call('POST', '/api/v1/orders/bulk', {
      token: admin.token,
      body: {
        items: [
          { product: lamp.id, quantity: 1 },
          { product: lamp.id, quantity: 5 },
        ],
      },
    });
    expect(bulk.status).toBe(409);
    expect(bulk.body.error.details).toEqual({ 'items.1.quantity': 'must be at most 1' });
    expect(await stockOf(lamp.id)).toBe(2);
    expect(await orders(lamp.id)).toEqual([]);
  });
});

describe('read-only fields: set by before-hooks, never by clients', () => {
  let server: TestServer;
  let admin: { token: string };
  const logged: string[] = [];
  const exampleOrders = registry.hooks.get('orders')!;
  beforeAll(async () => {
    server = await startTestServer(
      {},
      {
        logger: pino({ level: 'error' }, { write: (line: string) => void logged.push(line) }),
        registry: withHooks({
          orders: {
            ...exampleOrders,
            beforeCreate: async (args) => {
              const data = args.data as { note?: string };
              if (data.note === 'negative') return { ...data, total: -1 };
              if (data.note === 'text') return { ...data, total: 'a lot' };
              if (data.note === 'system') return { ...data, createdAt: '2001-01-01T00:00:00.000Z' };
              return exampleOrders.beforeCreate!(args);
            },
            beforeUpdate: async (args) => {
              const data = args.data as { note?: string };
              if (data.note === 'recount') return { ...data, total: 99.5 };
              return exampleOrders.beforeUpdate!(args);
            },
          },
        }),
      },
    );
    admin = await server.user({ roles: ['ADMIN'] });
  });
  afterAll(() => server.close());

  const call = (method: string, path: string, body?: unknown) =>
    server.call(method, path, { token: admin.token, body });
  const lamp = async () =>
    (await call('POST', '/api/v1/products', { name: 'Lamp', sku: `L-${Math.random()}`, price: 12.5, stock: 50 })).body
      .data;

  it('stores what beforeCreate and beforeUpdate set, and shows it on every read', async () => {
    const product = await lamp();
    const placed = await call('POST', '/api/v1/orders', { product: product.id, quantity: 3 });
    expect(placed.status).toBe(201);
    expect(placed.body.data.total).toBe(37.5);
    expect((await call('GET', `/api/v1/orders/${placed.body.data.id}`)).body.data.total).toBe(37.5);
    const recounted = await call('PATCH', `/api/v1/orders/${placed.body.data.id}`, { note: 'recount' });
    expect(recounted.status).toBe(200);
    expect(recounted.body.data).toMatchObject({ total: 99.5, note: 'recount' });
  });

  it('refuses the field from a client on create, bulk and update', async () => {
    const product = await lamp();
    const sent = await call('POST', '/api/v1/orders', { product: product.id, quantity: 1, total: 0 });
    expect(sent.status).toBe(400);
    expect(sent.body.error.details).toEqual({ total: 'is not allowed' });
    const bulk = await call('POST', '/api/v1/orders/bulk', { items: [{ product: product.id, quantity: 1, total: 0 }] });
    expect(bulk.status).toBe(400);
    expect(bulk.body.error.details).toEqual({ 'items.0.total': 'is not allowed' });
    const order = (await call('POST', '/api/v1/orders', { product: product.id, quantity: 1 })).body.data;
    const patched = await call('PATCH', `/api/v1/orders/${order.id}`, { total: 1 });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details).toEqual({ total: 'is not allowed' });
  });

  it('checks a hook’s value against the field’s type and constraints: 500, nothing stored, one message', async () => {
    const product = await lamp();
    const count = async () => (await call('GET', `/api/v1/orders?product=${product.id}`)).body.data.items.length;
    logged.length = 0;
    for (const [note, problem] of [
      ['negative', 'total must be at least 0'],
      ['text', 'total must be number or null'],
      ['system', 'createdAt is not allowed'],
    ]) {
      const failed = await call('POST', '/api/v1/orders', { product: product.id, quantity: 1, note });
      expect(failed.status).toBe(500);
      expect(failed.body.error).toEqual({ code: 'INTERNAL_ERROR', message: 'Internal server error' });
      const line = logged.find((text) => text.includes(problem));
      expect(line, `a log line naming "${problem}"`).toBeDefined();
      // The problem is told once, not once for the error and again for its cause.
      const { err } = JSON.parse(line!) as { err: { message: string } };
      expect(err.message).toBe(`hook orders.beforeCreate failed: returned data the create schema refuses: ${problem}`);
    }
    expect(await count()).toBe(0);
  });
});

describe('hooks on every write path', () => {
  const seen: string[] = [];
  const events: string[] = [];
  const callers: Caller[] = [];
  let server: TestServer;
  let admin: { id: string; token: string };
  beforeAll(async () => {
    server = await startTestServer(
      {},
      {
        registry: withHooks({
          articles: {
            beforeCreate: ({ data, operation }) => {
              seen.push(`create:${operation}`);
              const values = data as Record<string, unknown>;
              if (values.title === 'boom') throw new Error('the hook broke');
              if (values.title === 'sneaky') return { ...values, ownerId: 'aaaaaaaaaaaaaaaaaaaaaaaa' };
              if (values.title === 'bad type') return { ...values, views: 'many' };
              return { ...values, summary: `summary of ${values.title}` };
            },
            beforeUpdate: ({ data, operation, existing }) => {
              seen.push(`update:${operation}`);
              const patch = data as Record<string, unknown>;
              if (patch.title === 'forbidden') reject('UNPROCESSABLE_ENTITY', 'No', { title: 'is not allowed here' });
              if (operation === 'increment' && (patch.views as number) > 100) {
                reject('UNPROCESSABLE_ENTITY', 'Too many views', {
                  views: `must stay at most 100, was ${(existing as { views: number }).views}`,
                });
              }
              return undefined;
            },
            beforeDelete: ({ existing }) => {
              seen.push('delete');
              if ((existing as { title: string }).title === 'keep') reject('FORBIDDEN', 'This one stays');
            },
            afterCommit: ({ event, record, previous, caller }) => {
              events.push(`${event}:${(record ?? previous)?.title}`);
              callers.push(caller);
            },
          },
        }),
        overrides: {
          rateLimit: GENEROUS_LIMITS,
          hooks: { attempts: 3, backoffMs: 20, timeoutMs: 2000, leaseMs: 30_000 },
        },
      },
    );
    admin = await server.user({ roles: ['ADMIN'] });
  });
  afterAll(() => server.close());

  const call = (method: string, path: string, body?: unknown) =>
    server.call(method, path, { token: admin.token, body });

  it('runs on create, bulk, update, increment, archive, restore, revert and delete, and afterCommit hears each', async () => {
    const created = (await call('POST', '/api/v1/articles', { title: 'One', body: 'b' })).body.data;
    expect(created.summary).toBe('summary of One');
    await call('POST', '/api/v1/articles/bulk', { items: [{ title: 'Two', body: 'b' }] });
    await call('PATCH', `/api/v1/articles/${created.id}`, { title: 'One again' });
    await call('PATCH', `/api/v1/articles/${created.id}/increment`, { views: 5 });
    await call('POST', `/api/v1/articles/${created.id}/archive`);
    await call('POST', `/api/v1/articles/${created.id}/restore`);
    expect((await call('POST', `/api/v1/articles/${created.id}/revert/1`)).status).toBe(200);
    expect((await call('DELETE', `/api/v1/articles/${created.id}`)).status).toBe(200);
    expect(seen).toEqual([
      'create:create',
      'create:create',
      'update:update',
      'update:increment',
      'update:archive',
      'update:restore',
      'update:revert',
      'delete',
    ]);
    await server.dispatcher?.drain();
    expect(events).toEqual([
      'created:One',
      'created:Two',
      'updated:One again',
      'incremented:One again',
      'archived:One again',
      'restored:One again',
      'reverted:One',
      'deleted:One',
    ]);
    // afterCommit's caller is a Caller like every hook's: the author, with roles and permissions.
    expect(callers[0]).toMatchObject({ user: { id: admin.id }, roles: ['ADMIN'], isAdmin: true });
    expect(callers[0].permissions.has('system:admin')).toBe(true);
  });

  it('answers a hook’s reject with its code and details, and keeps the record as it was', async () => {
    const article = (await call('POST', '/api/v1/articles', { title: 'Kept', body: 'b' })).body.data;
    const refused = await call('PATCH', `/api/v1/articles/${article.id}`, { title: 'forbidden' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual({ title: 'is not allowed here' });
    const tooMany = await call('PATCH', `/api/v1/articles/${article.id}/increment`, { views: 500 });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.details).toEqual({ views: 'must stay at most 100, was 0' });
    const after = (await call('GET', `/api/v1/articles/${article.id}`)).body.data;
    expect(after).toMatchObject({ title: 'Kept', views: 0 });
    const keep = (await call('POST', '/api/v1/articles', { title: 'keep', body: 'b' })).body.data;
    expect((await call('DELETE', `/api/v1/articles/${keep.id}`)).status).toBe(403);
    expect((await call('GET', `/api/v1/articles/${keep.id}`)).status).toBe(200);
  });

  it('answers 500 and stores nothing when a hook throws or returns data a client could not send', async () => {
    const count = async () => (await call('GET', '/api/v1/articles?limit=1')).body.data.totalCount;
    const before = await count();
    for (const title of ['boom', 'sneaky', 'bad type']) {
      const failed = await call('POST', '/api/v1/articles', { title, body: 'b' });
      expect(failed.status).toBe(500);
      expect(failed.body.error).toEqual({ code: 'INTERNAL_ERROR', message: 'Internal server error' });
    }
    expect(await count()).toBe(before);
  });
});

describe('afterCommit delivery: retried, then failed where an admin sees it and can retry', () => {
  let server: TestServer;
  let admin: { token: string };
  let failuresLeft = 1;
  const delivered: string[] = [];
  beforeAll(async () => {
    server = await startTestServer(
      {},
      {
        registry: withHooks({
          comments: {
            afterCommit: ({ record, previous }) => {
              const body = (record ?? previous)?.body as string;
              if (body === 'never') throw new Error('the mail server is down');
              if (body === 'flaky' && failuresLeft-- > 0) throw new Error('try again');
              delivered.push(body);
            },
          },
          articles: {
            // Each article created makes another one through the hook's repositories: no end.
            beforeCreate: async ({ data, repositories }) => {
              const values = data as { title: string; body: string };
              if (values.title === 'recursive') {
                const repos = repositories as { articles: { create(d: unknown, e?: unknown): Promise<unknown> } };
                await repos.articles.create(
                  { title: 'recursive', body: 'again' },
                  { ownerId: 'aaaaaaaaaaaaaaaaaaaaaaaa' },
                );
              }
              return undefined;
            },
          },
        }),
        overrides: {
          rateLimit: GENEROUS_LIMITS,
          hooks: { attempts: 3, backoffMs: 10, timeoutMs: 2000, leaseMs: 30_000 },
        },
      },
    );
    admin = await server.user({ roles: ['ADMIN'] });
  });
  afterAll(() => server.close());

  const call = (method: string, path: string, body?: unknown) =>
    server.call(method, path, { token: admin.token, body });
  const deliverAll = async () => {
    for (let i = 0; i < 6; i++) {
      await server.dispatcher?.drain();
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
  };
  const comment = async (body: string) => {
    const article = (await call('POST', '/api/v1/articles', { title: 'On', body: 'b', status: 'published' })).body.data;
    return (await call('POST', '/api/v1/comments', { article: article.id, body })).body.data;
  };

  it('retries a failing hook until it succeeds, and records the delivery', async () => {
    const flaky = await comment('flaky');
    await deliverAll();
    expect(delivered).toContain('flaky');
    const deliveries = (await call('GET', '/api/v1/hookDeliveries?entity=comments')).body.data.items;
    expect(deliveries).toEqual([
      expect.objectContaining({
        entity: 'comments',
        entityId: flaky.id,
        event: 'created',
        status: 'delivered',
        attempts: 2,
        lastError: 'try again',
      }),
    ]);
  });

  it('gives up after hooks.attempts; an admin sets the delivery back to pending to try again', async () => {
    const never = await comment('never');
    await deliverAll();
    const [failed] = (await call('GET', '/api/v1/hookDeliveries?status=failed')).body.data.items;
    expect(failed).toMatchObject({
      entityId: never.id,
      status: 'failed',
      attempts: 3,
      lastError: 'the mail server is down',
    });
    const user = await server.user({ roles: ['USER'] });
    expect((await server.call('GET', '/api/v1/hookDeliveries', { token: user.token })).status).toBe(403);
    expect((await call('PATCH', `/api/v1/hookDeliveries/${failed.id}`, { status: 'pending' })).status).toBe(200);
    await deliverAll();
    const again = (await call('GET', `/api/v1/hookDeliveries/${failed.id}`)).body.data;
    expect(again).toMatchObject({ status: 'failed', attempts: 4 });
  });

  it('stops writes through hook repositories nested too deep, with nothing stored', async () => {
    const count = async () => (await call('GET', '/api/v1/articles?limit=1')).body.data.totalCount;
    const before = await count();
    const failed = await call('POST', '/api/v1/articles', { title: 'recursive', body: 'b' });
    expect(failed.status).toBe(500);
    expect(await count()).toBe(before);
  });
});
