import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSse } from '../support/sse.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

// The example app's products have `cost` under access rules (view and edit: FULFILMENT and the
// product's owner). A buyer may view products but never their cost: every GET route of the
// document is called as the buyer, with the ids of real records, and no answer may hold the
// cost's value; realtime events neither.

const document = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
/** A cost no other value of the app is: found in an answer, it came from the field. */
const COST = 4242.125;
const SECRET = String(COST);

describe('a field under access rules', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let buyer: { id: string; token: string };
  let picker: { id: string; token: string };
  let product: { id: string };
  let order: { id: string };

  beforeAll(async () => {
    server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS } });
    admin = (await server.user({ roles: ['ADMIN'] })) as { id: string; token: string };
    buyer = (await server.user({ roles: ['USER'] })) as { id: string; token: string };
    picker = (await server.user({ roles: ['FULFILMENT'] })) as { id: string; token: string };
    product = (
      await server.call('POST', '/api/v1/products', {
        token: admin.token,
        body: { name: 'Desk lamp', sku: 'LAMP-1', price: 30, stock: 9, cost: COST },
      })
    ).body.data;
    order = (
      await server.call('POST', '/api/v1/orders', { token: buyer.token, body: { product: product.id, quantity: 1 } })
    ).body.data;
    // A change of the cost, so the audit log holds its old and new values.
    await server.call('PATCH', `/api/v1/products/${product.id}`, { token: admin.token, body: { cost: COST + 1 } });
    await server.call('PATCH', `/api/v1/products/${product.id}`, { token: admin.token, body: { cost: COST } });
  });
  afterAll(() => server.close());

  it('is shown to those it names, and left out (the key absent) for everyone else', async () => {
    const as = async (token: string) =>
      (await server.call('GET', `/api/v1/products/${product.id}`, { token })).body.data as Record<string, unknown>;
    expect((await as(admin.token)).cost).toBe(COST);
    expect((await as(picker.token)).cost).toBe(COST);
    const seen = await as(buyer.token);
    expect(seen.name).toBe('Desk lamp');
    expect('cost' in seen).toBe(false);
  });

  it('never reaches a caller without access through any GET route of the document', async () => {
    const fill = (path: string) =>
      path.replace(/\{(\w+)\}/g, (_, name: string) => {
        if (name === 'id') return path.startsWith('/api/v1/orders') ? order.id : product.id;
        if (name === 'entity') return 'products';
        if (name === 'name') return 'cost';
        if (name === 'version') return '1';
        return 'x';
      });
    const calls: string[] = [];
    for (const [path, item] of Object.entries<Record<string, unknown>>(document.paths)) {
      if (!item.get || path.includes('/realtime') || path.startsWith('/api/v1/admin')) continue;
      const url = fill(path);
      calls.push(url);
      if (path.startsWith('/api/v1/orders')) calls.push(`${url}?populate=product`);
      if (path === '/api/v1/products') calls.push(`${url}?select=name,price`, `${url}?q=lamp`);
      if (path === '/api/v1/products/{id}') calls.push(`${url}?populate=orders`);
    }
    calls.push(`/api/v1/search?q=lamp`);
    expect(calls.length).toBeGreaterThan(40);
    // A custom endpoint's answer too (products' lowStock returns records as its handler read them).
    expect(calls).toContain('/api/v1/products/low-stock');
    for (const url of calls) {
      const answer = await server.call('GET', url, { token: buyer.token });
      expect(answer.status, url).toBeLessThan(500);
      expect(JSON.stringify(answer.body), url).not.toContain(SECRET);
    }
    expect(calls).toContain(`/api/v1/products/${product.id}/audit`);
    // The same calls do carry it for a caller it names: the check above would have seen it.
    const shown = await server.call('GET', `/api/v1/orders/${order.id}?populate=product`, { token: picker.token });
    expect(JSON.stringify(shown.body)).toContain(SECRET);
    const lowStock = await server.call('GET', '/api/v1/products/low-stock', { token: picker.token });
    expect(JSON.stringify(lowStock.body)).toContain(SECRET);
    const audit = await server.call('GET', `/api/v1/products/${product.id}/audit`, { token: picker.token });
    expect(JSON.stringify(audit.body)).toContain(SECRET);
    const hidden = await server.call('GET', `/api/v1/products/${product.id}/audit`, { token: buyer.token });
    expect(hidden.body.items.length).toBe(audit.body.items.length);
    for (const entry of hidden.body.items) expect(entry.changedFields).not.toContain('cost');
  });

  it('is no oracle: filters, sorts and measures by it answer 400 as for an unknown field', async () => {
    const refused = async (url: string, parameter: string) => {
      const answer = await server.call('GET', url, { token: buyer.token });
      expect(answer.status, url).toBe(400);
      expect(Object.keys(answer.body.error.details), url).toContain(parameter);
    };
    await refused('/api/v1/products?cost=4242.125', 'cost');
    await refused('/api/v1/products?cost%5Bgt%5D=4000', 'cost');
    await refused('/api/v1/products?sort=-cost', 'sort');
    await refused('/api/v1/products?select=name,cost', 'select');
    await refused('/api/v1/products/aggregate?max=cost', 'max');
    await refused('/api/v1/products/aggregate?groupBy=cost', 'groupBy');
    // Counts stay exact, and those it names may filter by it.
    const counted = await server.call('GET', '/api/v1/products?cost%5Bgt%5D=4000', { token: picker.token });
    expect(counted.status).toBe(200);
    expect(counted.body.data.totalCount).toBeGreaterThanOrEqual(1);
  });

  it('refuses a value from a caller it does not let set it, naming the field', async () => {
    // Roles made through the API: one may edit products, the other its cost too.
    for (const [key, permissions] of [
      ['CATALOG', ['products:view', 'products:edit']],
      ['COSTING', ['products:view', 'products:edit', 'products.cost:edit']],
    ] as const) {
      const made = await server.call('POST', '/api/v1/roles', {
        token: admin.token,
        body: { key, label: key, permissions },
      });
      expect(made.status).toBe(201);
    }
    const catalog = await server.user({ roles: ['CATALOG'] });
    const refused = await server.call('PATCH', `/api/v1/products/${product.id}`, {
      token: catalog.token,
      body: { stock: 8, cost: 1 },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toEqual({ cost: 'you may not set this field' });
    // Nothing of the refused write was stored; without the cost, the same write goes through.
    const allowed = await server.call('PATCH', `/api/v1/products/${product.id}`, {
      token: catalog.token,
      body: { stock: 8 },
    });
    expect(allowed.status).toBe(200);
    expect('cost' in allowed.body.data).toBe(false);
    const increment = await server.call('PATCH', `/api/v1/products/${product.id}/increment`, {
      token: catalog.token,
      body: { stock: 1, cost: 1 },
    });
    expect(increment.status).toBe(403);
    expect(increment.body.error.details).toEqual({ cost: 'you may not set this field' });
    const costing = await server.user({ roles: ['COSTING'] });
    const set = await server.call('PATCH', `/api/v1/products/${product.id}`, {
      token: costing.token,
      body: { cost: COST },
    });
    expect(set.status).toBe(200);
    // Edit implies view.
    expect(set.body.data.cost).toBe(COST);
  });

  it("is seen through an API key by its user's roles, within the key's own permissions", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const keyOf = async (token: string, permissions: string[]) => {
      const made = await server.call('POST', '/api/v1/apikeys', {
        token,
        body: { name: 'agent', permissions, expiresAt },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      return made.body.data.token as string;
    };
    const costOf = async (token: string) =>
      (await server.call('GET', `/api/v1/products/${product.id}`, { token })).body.data as Record<string, unknown>;
    // A role that lists the field: the key sees it with no field permission of its own.
    const fulfilment = await server.user({ roles: ['USER', 'FULFILMENT'] });
    expect((await costOf(await keyOf(fulfilment.token, ['products:view']))).cost).toBe(COST);
    // A field permission: only a key that holds it sees the field.
    const made = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'COST_READER', label: 'Cost reader', permissions: ['products:view', 'products.cost:view'] },
    });
    expect(made.status).toBe(201);
    const reader = await server.user({ roles: ['USER', 'COST_READER'] });
    expect((await costOf(reader.token)).cost).toBe(COST);
    expect('cost' in (await costOf(await keyOf(reader.token, ['products:view'])))).toBe(false);
    expect((await costOf(await keyOf(reader.token, ['products:view', 'products.cost:view']))).cost).toBe(COST);
  });

  it('stays out of realtime events for a subscriber without access', async () => {
    const stream = await openSse(`${server.url}/api/v1/realtime?entities=products`, { token: buyer.token });
    const watcher = await openSse(`${server.url}/api/v1/realtime?entities=products`, { token: picker.token });
    try {
      const changed = await server.call('PATCH', `/api/v1/products/${product.id}`, {
        token: admin.token,
        body: { name: 'Desk lamp, brass', cost: COST },
      });
      expect(changed.status).toBe(200);
      const event = await stream.next((e) => e.event === 'products.updated' && e.data.id === product.id);
      expect(event.data.name).toBe('Desk lamp, brass');
      expect('cost' in event.data).toBe(false);
      const named = await watcher.next((e) => e.event === 'products.updated' && e.data.id === product.id);
      expect(named.data.cost).toBe(COST);
    } finally {
      stream.close();
      watcher.close();
    }
  });

  it("shows an owner's field on their own records only, in answers and in realtime events", async () => {
    const made = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'MAKER', label: 'Maker', permissions: ['products:view', 'products:create', 'products:edit'] },
    });
    expect(made.status).toBe(201);
    const maker = await server.user({ roles: ['MAKER'] });
    // The creator owns the new record, so `owner` in the field's edit lets them set it.
    const own = await server.call('POST', '/api/v1/products', {
      token: maker.token,
      body: { name: 'Reading lamp', sku: 'LAMP-2', price: 40, cost: 777.5 },
    });
    expect(own.status).toBe(201);
    expect(own.body.data.cost).toBe(777.5);
    const listed = await server.call('GET', '/api/v1/products?limit=100', { token: maker.token });
    const byId = new Map(listed.body.data.items.map((item: { id: string }) => [item.id, item]));
    expect((byId.get(own.body.data.id) as { cost?: number }).cost).toBe(777.5);
    expect('cost' in (byId.get(product.id) as object)).toBe(false);
    // Not theirs on every record: no filter by it, and no setting it on another's record.
    const filtered = await server.call('GET', '/api/v1/products?cost%5Bgt%5D=700', { token: maker.token });
    expect(filtered.status).toBe(400);
    const other = await server.call('PATCH', `/api/v1/products/${product.id}`, {
      token: maker.token,
      body: { cost: 1 },
    });
    expect(other.status).toBe(403);
    expect(other.body.error.details).toEqual({ cost: 'you may not set this field' });

    const stream = await openSse(`${server.url}/api/v1/realtime?entities=products`, { token: maker.token });
    try {
      await server.call('PATCH', `/api/v1/products/${product.id}`, { token: admin.token, body: { stock: 7 } });
      await server.call('PATCH', `/api/v1/products/${own.body.data.id}`, { token: admin.token, body: { stock: 3 } });
      const theirs = await stream.next((e) => e.event === 'products.updated' && e.data.id === product.id);
      expect(theirs.data.stock).toBe(7);
      expect('cost' in theirs.data).toBe(false);
      const mine = await stream.next((e) => e.event === 'products.updated' && e.data.id === own.body.data.id);
      expect(mine.data.cost).toBe(777.5);
    } finally {
      stream.close();
    }
    // A custom endpoint's records, shown by its handler with `present`, follow the same rule.
    const low = await server.call('GET', '/api/v1/products/low-stock', { token: maker.token });
    const lowById = new Map(low.body.data.map((item: { id: string }) => [item.id, item]));
    expect((lowById.get(own.body.data.id) as { cost?: number }).cost).toBe(777.5);
    expect(lowById.get(product.id)).toBeDefined();
    expect('cost' in (lowById.get(product.id) as object)).toBe(false);
  });
});
