import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineHooks } from '../../generated/hooks.js';
import { registry, repositories } from '../../generated/index.js';
import { signSession } from '../../runtime/auth/sessionToken.js';
import { createEntigen, type Entigen } from '../../runtime/index.js';
import { newId } from '../../runtime/write/prepareWrite.js';
import { repoRoot } from '../support/cli.js';
import { checkResponse } from '../support/openApiCheck.js';
import { testDatabaseUrl } from '../support/testServer.js';

describe('entigen mounted in an existing Express application', () => {
  let entigen: Entigen;
  let server: Server;
  let base: string;
  let token: string;
  beforeAll(async () => {
    entigen = await createEntigen({
      registry,
      repositories,
      // Hook modules passed in code: the example's orders module, plus one of this test's own.
      hooks: [
        ...[...registry.hooks].map(([plural, hooks]) => ({ plural, hooks })),
        defineHooks('comments', { beforeCreate: ({ data }) => ({ ...data, body: `${data.body} (embedded)` }) }),
      ],
      root: repoRoot,
      logger: pino({ level: 'silent' }),
      schedule: false,
      env: {
        DATABASE_URL: testDatabaseUrl(mkdtempSync(join(tmpdir(), 'entigen-embed-'))),
        SESSION_SECRET: 'embed-secret',
        APP_ENCRYPTION_KEY: 'embed-key',
      },
    });
    const id = newId();
    const now = new Date().toISOString();
    await entigen.ctx.store.insert('users', {
      id,
      email: 'admin@embed.test',
      displayName: 'Admin',
      roles: ['ADMIN'],
      authSource: 'local',
      disabled: false,
      createdAt: now,
      updatedAt: now,
    });
    token = signSession('embed-secret', id, Date.now());
    const host = express();
    // The host's own middleware runs first, for every request.
    host.use((_req, res, next) => {
      res.setHeader('x-host', 'yes');
      next();
    });
    host.get('/hello', (_req, res) => void res.json({ hello: 'from the host' }));
    host.use('/api', entigen.handler);
    host.get('/api/own', (_req, res) => void res.json({ own: true }));
    server = await new Promise<Server>((resolve) => {
      const listening = host.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const address = server.address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await entigen.close();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : undefined;
    // entigen's answers must match its OpenAPI document, mounted or not; the host's own routes are not in it.
    if (path.startsWith('/api/v1/') || path.startsWith('/api/health')) {
      const problems = checkResponse(method, path, response.status, response.headers.get('content-type'), parsed);
      expect(problems).toEqual([]);
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };

  it('serves the host’s own routes beside entigen, with the host’s middleware', async () => {
    const hello = await call('GET', '/hello');
    expect(hello).toMatchObject({ status: 200, body: { hello: 'from the host' } });
    expect(hello.headers.get('x-host')).toBe('yes');
    expect(hello.headers.get('x-correlation-id')).toBeNull();
    expect((await call('GET', '/api/own')).body).toEqual({ own: true });
  });

  it('answers entigen’s paths with its whole pipeline: correlation id, security headers, auth, hooks, envelope', async () => {
    const created = await call('POST', '/api/v1/articles', { title: 'Embedded', body: 'b' });
    expect(created.status).toBe(201);
    expect(created.body.data.title).toBe('Embedded');
    expect(created.headers.get('x-correlation-id')).toBeTruthy();
    expect(created.headers.get('x-content-type-options')).toBe('nosniff');
    expect(created.headers.get('x-host')).toBe('yes');
    const anonymous = await fetch(`${base}/api/v1/orders`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    const missing = await call('GET', '/api/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    expect((await call('GET', '/api/health')).status).toBe(200);
    const comment = await call('POST', '/api/v1/comments', { article: created.body.data.id, body: 'hi' });
    expect(comment.body.data.body).toBe('hi (embedded)');
  });
});
