import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../support/testServer.js';

// The whole suite also runs on this adapter (npm run test:node-adapter); here: that it is the one
// answering, past Express for the entity routes and through Express for everything else.
let node: TestServer;
let express: TestServer;

beforeAll(async () => {
  node = await startTestServer({ HTTP_ADAPTER: 'node' });
  express = await startTestServer({ HTTP_ADAPTER: 'express' });
});
afterAll(async () => {
  await node?.close();
  await express?.close();
});

describe('the node:http adapter (server.adapter: node)', () => {
  it('serves the entity routes without Express and everything else through it, with the same answers', async () => {
    expect(node.config.server.adapter).toBe('node');
    const handle = vi.spyOn(node.app as unknown as { handle: (...args: unknown[]) => void }, 'handle');
    const answers = async (server: TestServer) => {
      const admin = await server.user({ roles: ['ADMIN'] });
      const created = await server.call('POST', '/api/v1/articles', {
        token: admin.token,
        body: { title: 'Same', body: 'Either way' },
      });
      const id = created.body.data.id as string;
      const calls = [
        ['GET', `/api/v1/articles/${id}`],
        ['GET', '/api/v1/articles?sort=-views&limit=5'],
        ['PATCH', `/api/v1/articles/${id}`, { views: 3 }],
        ['GET', `/api/v1/articles/${id}/versions`],
        ['GET', '/api/v1/articles/not-an-id'],
        ['GET', `/api/v1/articles/${id}?nope=1`],
        ['DELETE', '/api/v1/articles'],
      ] as const;
      const out: unknown[] = [created.status];
      for (const [method, path, body] of calls) {
        const response = await server.call(method, path, { token: admin.token, body });
        out.push([method, path.replace(id, 'ID'), response.status, response.body?.error?.code ?? null]);
      }
      // Anonymous: the same 401/403 as Express gives.
      out.push((await server.call('POST', '/api/v1/articles', { body: {} })).status);
      return { out, id, admin };
    };
    const viaNode = await answers(node);
    const entityCalls = handle.mock.calls.length;
    const viaExpress = await answers(express);
    expect(viaNode.out).toEqual(viaExpress.out);
    // Only DELETE on the collection (405, not a route) went to Express among the entity calls.
    expect(entityCalls).toBe(1);

    // Paths Express matches in its own ways are its own: trailing slash, other case (not a route), HEAD, health.
    handle.mockClear();
    const headers = { authorization: `Bearer ${viaNode.admin.token}` };
    for (const path of [`/api/v1/articles/${viaNode.id}/`, '/api/health']) {
      expect((await fetch(`${node.url}${path}`, { headers })).status).toBe(200);
    }
    expect((await fetch(`${node.url}/api/v1/Articles/${viaNode.id}`, { headers })).status).toBe(404);
    expect((await fetch(`${node.url}/api/v1/articles/${viaNode.id}`, { method: 'HEAD', headers })).status).toBe(200);
    expect(handle).toHaveBeenCalledTimes(4);
  });

  it('keeps the pipeline in front of the routes it serves: correlation id, headers, limits, errors', async () => {
    const admin = await node.user({ roles: ['ADMIN'] });
    const response = await node.call('GET', '/api/v1/articles', {
      token: admin.token,
      headers: { 'x-correlation-id': '0f8fad5b-d9cb-469f-a165-70867728950e' },
    });
    expect(response.headers.get('x-correlation-id')).toBe('0f8fad5b-d9cb-469f-a165-70867728950e');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect((await node.call('GET', '/api/v1/articles', { token: 'forged.1.x' })).status).toBe(401);
    expect((await node.call('POST', '/api/v1/articles', { token: admin.token, body: '{"title":' })).status).toBe(400);
  });
});

describe('the entity lane of the Express app (entityLane.ts)', () => {
  /** The Express layer that enters the routers mounted under /api/v1, wrapped to count its calls. */
  function countMountedRouters(server: TestServer): { calls: number } {
    const stack = (
      server.app as unknown as { router: { stack: { name: string; handle: (...args: unknown[]) => unknown }[] } }
    ).router.stack;
    const layer = stack.find((l) => l.name === 'mountedRouters');
    if (!layer) throw new Error('no mountedRouters layer in the app');
    const counter = { calls: 0 };
    const handle = layer.handle;
    layer.handle = (...args: unknown[]) => {
      counter.calls++;
      return handle(...args);
    };
    return counter;
  }

  it('answers plain entity routes itself, exactly as the entity router answers the same request', async () => {
    expect(express.config.server.adapter).toBe('express');
    const routers = countMountedRouters(express);
    const admin = await express.user({ roles: ['ADMIN'] });
    const created = await express.call('POST', '/api/v1/articles', {
      token: admin.token,
      body: { title: 'Lane', body: 'Past the router' },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect(routers.calls).toBe(0);
    // A trailing slash is left to Express's router (it matches it, the lane does not): the two
    // paths must answer alike, success and failure.
    const pairs = [
      `/api/v1/articles/${id}`,
      '/api/v1/articles?sort=-views&limit=5',
      `/api/v1/articles/${id}/versions`,
      '/api/v1/articles/not-an-id',
      `/api/v1/articles/${id}?nope=1`,
    ];
    for (const plain of pairs) {
      const [path, query] = plain.split('?');
      const viaLane = await express.call('GET', plain, { token: admin.token });
      const before = routers.calls;
      const viaRouter = await express.call('GET', `${path}/${query ? `?${query}` : ''}`, { token: admin.token });
      expect(routers.calls, plain).toBe(before + 1);
      expect(viaLane.status, plain).toBe(viaRouter.status);
      expect(viaLane.body?.error?.code ?? null, plain).toBe(viaRouter.body?.error?.code ?? null);
      if (viaLane.status === 200) expect(viaLane.body, plain).toEqual(viaRouter.body);
    }
    // 405 for a method the entity has no route for is the router's (methodNotAllowed).
    const calls = routers.calls;
    expect((await express.call('DELETE', '/api/v1/articles', { token: admin.token })).status).toBe(405);
    expect(routers.calls).toBe(calls + 1);
    // The pipeline still runs in front of the lane: limits headers, correlation id, 401.
    const answer = await express.call('GET', `/api/v1/articles/${id}`, { token: admin.token });
    expect(answer.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(answer.headers.get('x-correlation-id')).toBeTruthy();
    expect((await express.call('GET', `/api/v1/articles/${id}`, { token: 'forged.1.x' })).status).toBe(401);
  });
});

describe('requests born with the Express prototypes (expressMessages.ts)', () => {
  it('leaves Express and the node adapter no prototype to change on any request', async () => {
    for (const server of [express, node]) {
      const admin = await server.user({ roles: ['ADMIN'] });
      const changes: boolean[] = [];
      const setPrototypeOf = Object.setPrototypeOf;
      const spy = vi.spyOn(Object, 'setPrototypeOf').mockImplementation((target, proto) => {
        if (proto === server.app.request || proto === server.app.response)
          changes.push(Object.getPrototypeOf(target) !== proto);
        return setPrototypeOf(target, proto);
      });
      try {
        // An entity route (the lane), a fixed route and a 404, each through its own path.
        expect((await server.call('GET', '/api/v1/articles?limit=1', { token: admin.token })).status).toBe(200);
        expect((await server.call('GET', '/api/v1/auth/me', { token: admin.token })).status).toBe(200);
        expect((await server.call('GET', '/api/v1/nowhere', { token: admin.token })).status).toBe(404);
      } finally {
        spy.mockRestore();
      }
      // Express asks on every request it handles; the answer is always "already so".
      expect(
        changes.every((changed) => !changed),
        server.config.server.adapter,
      ).toBe(true);
      if (server === express) expect(changes.length).toBeGreaterThanOrEqual(6);
    }
  });
});
