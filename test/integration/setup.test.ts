import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath, repoRoot } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const PASSWORD = 'correct horse battery staple!';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('first-run setup', () => {
  it('sends browsers to /setup and answers the API 503, saying what to do, until an admin exists', async () => {
    server = await startTestServer({}, { withAdmin: false });
    // An API client hears why, in the envelope, with both ways to create the administrator.
    const get = await server.call('GET', '/api/v1/articles');
    expect(get.status).toBe(503);
    expect(get.body.error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message:
        'Setup is not done: create the administrator at /setup, or start the server with ENTIGEN_ADMIN_EMAIL and ENTIGEN_ADMIN_PASSWORD set',
      details: { setup: '/setup' },
    });
    // A browser's page (and a browser sent to an API address) goes to the form.
    for (const [path, accept] of [
      ['/', '*/*'],
      ['/admin', 'text/html,application/xhtml+xml,*/*;q=0.8'],
      ['/api/docs', '*/*'],
      ['/api/v1/articles', 'text/html,application/xhtml+xml,*/*;q=0.8'],
    ]) {
      const page = await fetch(`${server.url}${path}`, { headers: { accept }, redirect: 'manual' });
      expect([path, page.status, page.headers.get('location')]).toEqual([path, 302, '/setup']);
    }
    const post = await server.call('POST', '/api/v1/auth/register', {
      body: { email: 'a@example.test', password: PASSWORD, displayName: 'A' },
    });
    expect(post.status).toBe(503);
    expect(post.body.error.code).toBe('SERVICE_UNAVAILABLE');
    const page = await server.call('GET', '/setup');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.body).toContain('name="email"');
    expect(page.body).toContain('name="tenantName"');
  });

  it('creates exactly one admin from concurrent submissions, linked to the first tenant, and signs them in', async () => {
    server = await startTestServer({}, { withAdmin: false });
    const submissions = await Promise.all(
      [1, 2, 3].map((n) =>
        server!.call('POST', '/setup', {
          body: { name: `Admin ${n}`, email: `admin${n}@example.test`, password: PASSWORD, tenantName: `Org ${n}` },
        }),
      ),
    );
    const created = submissions.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    expect(submissions.filter((r) => r.status !== 201).every((r) => r.status === 409 || r.status === 404)).toBe(true);
    const { user, token } = created[0].body;
    expect(created[0].headers.get('set-cookie')).toMatch(/^entigen_uid=/);
    const me = await server.call('GET', '/api/v1/auth/me', { token });
    expect(me.body).toMatchObject({ user, roles: ['ADMIN'] });
    const orgs = await server.call('GET', '/api/v1/organizations', { token });
    expect(orgs.body.data.items).toHaveLength(1);
    expect(orgs.body.data.items[0].members).toEqual([user.id]);
    expect((await server.call('GET', '/setup')).status).toBe(404);
    expect((await server.call('GET', '/api/v1/articles')).status).toBe(200);
  });

  it('accepts the HTML form, redirects signed in, and shows errors in the form', async () => {
    server = await startTestServer({}, { withAdmin: false });
    const form = (fields: Record<string, string>) =>
      server!.call('POST', '/setup', {
        body: new URLSearchParams(fields).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const bad = await form({ name: 'A', email: 'not-an-email', password: 'short', tenantName: 'Org' });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('must be an email address');
    expect(bad.body).toContain('at least 12 characters');
    const nul = await form({ name: 'A\u0000', email: 'ada@example.test', password: PASSWORD, tenantName: 'Org' });
    expect(nul.status).toBe(400);
    expect(nul.body).toContain('must not contain the NUL character');
    const ok = await form({ name: 'Ada', email: 'ada@example.test', password: PASSWORD, tenantName: 'Org' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/');
    const home = await server.call('GET', '/');
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/^text\/html/);
    expect(home.body).toContain('is set up');
    expect(home.body).toContain('href="/api/docs"');
    const cookie = ok.headers.get('set-cookie')!.split(';')[0];
    const me = await server.call('GET', '/api/v1/auth/me', { headers: { cookie } });
    expect(me.body.user.email).toBe('ada@example.test');
  });

  it('notices an admin made by `entigen setup` without a restart; the command refuses a second one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-setup-'));
    const db = join(dir, 'setup.db');
    server = await startTestServer({ DATABASE_URL: `sqlite:${db}` }, { withAdmin: false });
    expect((await server.call('GET', '/api/v1/articles')).status).toBe(503);
    const env = { ...process.env, DATABASE_URL: `sqlite:${db}`, SESSION_SECRET: 'x' };
    const run = (args: string[]) =>
      spawnSync(process.execPath, [cliPath, 'setup', ...args], { cwd: repoRoot, env, encoding: 'utf8' });
    const weak = run(['--email', 'cli@example.test', '--password', 'short']);
    expect(weak.status).toBe(1);
    expect(weak.stderr).toContain('password must be at least 12 characters');
    const made = run(['--email', 'cli@example.test', '--password', PASSWORD, '--name', 'CLI Admin']);
    expect(made.stderr).toBe('');
    expect(made.stdout).toMatch(/created administrator cli@example\.test/);
    expect((await server.call('GET', '/api/v1/articles')).status).toBe(200);
    const login = await server.call('POST', '/api/v1/auth/login', {
      body: { email: 'cli@example.test', password: PASSWORD },
    });
    expect(login.status).toBe(200);
    expect(run(['--email', 'other@example.test', '--password', PASSWORD]).status).toBe(1);
  });

  it('keeps ADMIN whole: no role change removes system:admin; recover-admin gets a locked-out admin back in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-lockout-'));
    const db = join(dir, 'lockout.db');
    server = await startTestServer({ DATABASE_URL: `sqlite:${db}` });
    const admin = await server.user({ roles: ['ADMIN'] });
    const strip = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'ADMIN', label: 'Admin', permissions: [] },
    });
    expect(strip.status).toBe(422);
    expect(strip.body.error.details).toEqual({ permissions: 'must include system:admin for the ADMIN role' });
    expect(
      (
        await server.call('PUT', '/api/v1/roles/ADMIN', {
          token: admin.token,
          body: { permissions: ['articles:view'] },
        })
      ).status,
    ).toBe(422);
    // A stored override that lacks it (an older database) cannot take it away either.
    const now = new Date().toISOString();
    await server.ctx.store.insert('roles', {
      id: `${'0'.repeat(23)}1`,
      key: 'ADMIN',
      label: 'Admin',
      permissions: [],
      isSystem: true,
      createdAt: now,
      updatedAt: now,
    });
    server.auth.roles.invalidate();
    expect((await server.call('GET', '/api/v1/roles', { token: admin.token })).status).toBe(200);
    const relabel = await server.call('PUT', '/api/v1/roles/ADMIN', {
      token: admin.token,
      body: { label: 'Boss', permissions: ['system:admin', 'articles:view'] },
    });
    expect(relabel.body).toMatchObject({
      key: 'ADMIN',
      label: 'Boss',
      permissions: expect.arrayContaining(['system:admin']),
    });

    // The last admin links itself to an LDAP server that does not exist: its password is gone.
    expect(
      (await server.call('PUT', `/api/v1/users/${admin.id}`, { token: admin.token, body: { authSource: 'ldap' } }))
        .status,
    ).toBe(200);
    const env = { ...process.env, DATABASE_URL: `sqlite:${db}`, SESSION_SECRET: 'x' };
    const stored = (await server.ctx.store.get('users', admin.id))!;
    const recovered = spawnSync(
      process.execPath,
      [cliPath, 'recover-admin', '--email', stored.email as string, '--password', PASSWORD],
      { cwd: repoRoot, env, encoding: 'utf8' },
    );
    expect(recovered.stderr).toBe('');
    expect(recovered.stdout).toMatch(/is an enabled local administrator/);
    const login = await server.call('POST', '/api/v1/auth/login', {
      body: { email: stored.email, password: PASSWORD },
    });
    expect(login.status).toBe(200);
    expect((await server.call('GET', '/api/v1/roles', { token: login.body.token })).status).toBe(200);
    // Earlier sessions of the recovered account end.
    expect((await server.call('GET', '/api/v1/auth/me', { token: admin.token })).status).toBe(401);
  });

  it('creates the admin from ENTIGEN_ADMIN_EMAIL and ENTIGEN_ADMIN_PASSWORD at start', async () => {
    server = await startTestServer(
      { ENTIGEN_ADMIN_EMAIL: 'env@example.test', ENTIGEN_ADMIN_PASSWORD: PASSWORD },
      { withAdmin: false },
    );
    expect((await server.call('GET', '/api/v1/articles')).status).toBe(200);
    expect(
      (await server.call('POST', '/api/v1/auth/login', { body: { email: 'env@example.test', password: PASSWORD } }))
        .status,
    ).toBe(200);
  });
});
