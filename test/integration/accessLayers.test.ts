import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/testServer.js';

let server: TestServer;
let admin: { id: string; token: string };

beforeAll(async () => {
  server = await startTestServer();
  admin = await server.user({ roles: ['ADMIN'] });
});
afterAll(() => server.close());

describe('roles', () => {
  it('lists built-in roles and available permissions', async () => {
    const roles = await server.call('GET', '/api/v1/roles', { token: admin.token });
    expect(roles.status).toBe(200);
    const keys = roles.body.items.map((r: { key: string }) => r.key);
    expect(keys).toEqual(expect.arrayContaining(['ADMIN', 'USER', 'API', 'ANONYMOUS', 'MODERATOR']));
    expect(roles.body.items.find((r: { key: string }) => r.key === 'ADMIN')).toMatchObject({
      permissions: ['system:admin'],
      isBuiltin: true,
      isSystem: true,
    });
    const available = await server.call('GET', '/api/v1/roles/available-permissions', { token: admin.token });
    expect(available.body).toContainEqual(
      expect.objectContaining({ key: 'articles:view:own', entity: 'articles', action: 'view', scope: 'own' }),
    );
    const user = await server.user();
    expect((await server.call('GET', '/api/v1/roles', { token: user.token })).status).toBe(403);
  });

  it('creates a custom role whose permissions apply at once, edits and deletes it', async () => {
    const created = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: {
        key: 'EDITOR',
        label: 'Editor',
        description: 'Edits every article',
        permissions: ['articles:view', 'articles:edit:all'],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      key: 'EDITOR',
      isBuiltin: false,
      permissions: ['articles:view', 'articles:edit:all'],
    });
    expect(
      (
        await server.call('POST', '/api/v1/roles', {
          token: admin.token,
          body: { key: 'EDITOR', label: 'x', permissions: [] },
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await server.call('POST', '/api/v1/roles', {
          token: admin.token,
          body: { key: 'bad key', label: 'x', permissions: ['articles:fly'] },
        })
      ).body.error.details,
    ).toMatchObject({
      key: expect.any(String),
      'permissions.0': expect.stringMatching(/unknown action/),
    });

    const author = await server.user();
    const editor = await server.user({ roles: ['EDITOR'] });
    const article = await server.call('POST', '/api/v1/articles', {
      token: author.token,
      body: { title: 'Draft', body: 'b' },
    });
    const edited = await server.call('PATCH', `/api/v1/articles/${article.body.data.id}`, {
      token: editor.token,
      body: { title: 'Edited' },
    });
    expect(edited.status).toBe(200);

    const narrowed = await server.call('PUT', '/api/v1/roles/EDITOR', {
      token: admin.token,
      body: { permissions: ['articles:view'] },
    });
    expect(narrowed.body.permissions).toEqual(['articles:view']);
    expect(
      (
        await server.call('PATCH', `/api/v1/articles/${article.body.data.id}`, {
          token: editor.token,
          body: { title: 'x' },
        })
      ).status,
    ).toBe(403);
    expect((await server.call('DELETE', '/api/v1/roles/EDITOR', { token: admin.token })).body).toEqual({
      key: 'EDITOR',
      deleted: true,
    });
    expect((await server.call('DELETE', '/api/v1/roles/EDITOR', { token: admin.token })).status).toBe(404);
  });

  it('overrides a built-in role with a stored one and falls back when it is deleted', async () => {
    const user = await server.user();
    expect((await server.call('GET', '/api/v1/projects', { token: user.token })).status).toBe(200);
    const override = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'USER', label: 'User', permissions: ['articles:view:own'] },
    });
    expect(override.status).toBe(201);
    expect(override.body.isBuiltin).toBe(true);
    expect((await server.call('GET', '/api/v1/projects', { token: user.token })).status).toBe(403);
    expect((await server.call('DELETE', '/api/v1/roles/USER', { token: admin.token })).status).toBe(200);
    expect((await server.call('GET', '/api/v1/projects', { token: user.token })).status).toBe(200);
    expect((await server.call('DELETE', '/api/v1/roles/ADMIN', { token: admin.token })).status).toBe(422);
  });

  it('gives every role a stable id: built-ins the same on every server, kept by an override', async () => {
    const idsOf = async (target: TestServer) =>
      Object.fromEntries(
        (await target.call('GET', '/api/v1/roles', { token: admin.token })).body.items.map(
          (r: { key: string; id: string }) => [r.key, r.id],
        ),
      );
    const ids = await idsOf(server);
    for (const key of ['ADMIN', 'USER', 'API', 'ANONYMOUS', 'MODERATOR']) expect(ids[key]).toMatch(/^[0-9a-f]{24}$/);
    expect(new Set(Object.values(ids)).size).toBe(Object.keys(ids).length);
    const other = await startTestServer();
    try {
      const otherAdmin = await other.user({ roles: ['ADMIN'] });
      const again = Object.fromEntries(
        (await other.call('GET', '/api/v1/roles', { token: otherAdmin.token })).body.items.map(
          (r: { key: string; id: string }) => [r.key, r.id],
        ),
      );
      expect(again.MODERATOR).toBe(ids.MODERATOR);
    } finally {
      await other.close();
    }
    const override = await server.call('PUT', '/api/v1/roles/MODERATOR', {
      token: admin.token,
      body: { permissions: ['articles:view'] },
    });
    expect(override.body.id).toBe(ids.MODERATOR);
    await server.call('DELETE', '/api/v1/roles/MODERATOR', { token: admin.token });
    expect((await idsOf(server)).MODERATOR).toBe(ids.MODERATOR);
    const custom = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'AUDITOR', label: 'Auditor', permissions: [] },
    });
    expect(custom.body.id).toMatch(/^[0-9a-f]{24}$/);
    expect((await idsOf(server)).AUDITOR).toBe(custom.body.id);
  });
});

describe('API keys', () => {
  it('shows the token once, stores only its hash, and lists keys masked', async () => {
    const user = await server.user();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await server.call('POST', '/api/v1/apikeys', {
      token: user.token,
      body: { name: 'ci', permissions: ['articles:view:own'], expiresAt },
    });
    expect(created.status).toBe(201);
    const { token, lastEight, id } = created.body.data;
    expect(token).toMatch(/^egk_[0-9A-Za-z]{40}$/);
    expect(lastEight).toBe(`egk_****${token.slice(-8)}`);
    const stored = await server.ctx.store.get('apiKeys', id);
    expect(JSON.stringify(stored)).not.toContain(token);
    const listed = await server.call('GET', '/api/v1/apikeys', { token: user.token });
    expect(listed.body.data.items).toEqual([
      {
        id,
        name: 'ci',
        permissions: ['articles:view:own'],
        expiresAt,
        lastEight,
        createdAt: expect.any(String),
        lastUsedAt: null,
        mcp: true,
      },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(token);
  });

  it('holds only its permissions: beyond them 403; revoked and expired keys 401', async () => {
    const user = await server.user();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const { body } = await server.call('POST', '/api/v1/apikeys', {
      token: user.token,
      body: { name: 'read', permissions: ['articles:view:own'], expiresAt },
    });
    const key = body.data.token;
    expect((await server.call('GET', '/api/v1/articles', { token: key })).status).toBe(200);
    const denied = await server.call('POST', '/api/v1/articles', { token: key, body: { title: 't', body: 'b' } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('FORBIDDEN');
    expect((await server.call('DELETE', `/api/v1/apikeys/${body.data.id}`, { token: user.token })).body).toEqual({
      data: { id: body.data.id, revoked: true },
    });
    expect((await server.call('GET', '/api/v1/articles', { token: key })).status).toBe(401);

    const soon = await server.call('POST', '/api/v1/apikeys', {
      token: user.token,
      body: { name: 'soon', permissions: [], expiresAt: new Date(Date.now() + 300).toISOString() },
    });
    await new Promise((r) => setTimeout(r, 400));
    expect((await server.call('GET', '/api/v1/articles', { token: soon.body.data.token })).status).toBe(401);
  });

  it('reach account endpoints only with account permissions, and never mint a key that outlives or outranks them', async () => {
    const user = await server.user();
    const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();
    const mint = (token: string, permissions: string[], expiresAt = day(1)) =>
      server.call('POST', '/api/v1/apikeys', { token, body: { name: 'k', permissions, expiresAt } });
    const other = await mint(user.token, []);
    const reader = (await mint(user.token, ['articles:view:own'])).body.data.token;

    // A key made to read articles cannot touch its owner's account.
    expect((await server.call('GET', '/api/v1/apikeys', { token: reader })).status).toBe(403);
    expect((await server.call('DELETE', `/api/v1/apikeys/${other.body.data.id}`, { token: reader })).status).toBe(403);
    expect((await mint(reader, [], '9999-01-01T00:00:00Z')).status).toBe(403);
    expect(
      (await server.call('PUT', `/api/v1/users/${user.id}`, { token: reader, body: { displayName: 'Renamed' } }))
        .status,
    ).toBe(403);
    const password = await server.call('POST', '/api/v1/auth/change-password', {
      token: reader,
      body: { currentPassword: 'x', newPassword: 'a long passphrase!' },
    });
    expect(password.status).toBe(403);
    expect((await server.ctx.store.get('apiKeys', other.body.data.id))?.revokedAt).toBeNull();
    expect((await server.ctx.store.get('users', user.id))?.displayName).not.toBe('Renamed');

    // Given account permissions, it may use them, within its own expiry and permissions.
    const manager = await mint(
      user.token,
      ['apiKeys:view', 'apiKeys:create', 'apiKeys:delete', 'account:edit', 'articles:view:own'],
      day(2),
    );
    const key = manager.body.data.token;
    expect((await server.call('GET', '/api/v1/apikeys', { token: key })).status).toBe(200);
    const outlives = await mint(key, [], day(3));
    expect(outlives.status).toBe(403);
    expect(outlives.body.error.details).toHaveProperty('expiresAt');
    expect((await mint(key, ['articles:create'], day(1))).status).toBe(403);
    const child = await mint(key, ['articles:view:own'], day(1));
    expect(child.status).toBe(201);
    expect((await mint(child.body.data.token, [], day(1))).status).toBe(403);
    expect(
      (await server.call('PUT', `/api/v1/users/${user.id}`, { token: key, body: { displayName: 'By key' } })).body
        .displayName,
    ).toBe('By key');
    expect((await server.call('DELETE', `/api/v1/apikeys/${other.body.data.id}`, { token: key })).status).toBe(200);
    // Even a key holding every account permission cannot change the password (that would hand it a session).
    expect(
      (
        await server.call('POST', '/api/v1/auth/change-password', {
          token: key,
          body: { currentPassword: 'x', newPassword: 'a long passphrase!' },
        })
      ).status,
    ).toBe(403);
  });

  it('refuses permissions beyond the creator, a past or missing expiry, and more than 50 live keys', async () => {
    const user = await server.user();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    expect(
      (
        await server.call('POST', '/api/v1/apikeys', {
          token: user.token,
          body: { name: 'x', permissions: ['articles:delete:all'], expiresAt },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await server.call('POST', '/api/v1/apikeys', {
          token: user.token,
          body: { name: 'x', permissions: [], expiresAt: '2001-01-01T00:00:00Z' },
        })
      ).body.error.details,
    ).toEqual({ expiresAt: 'must be in the future' });
    expect(
      (await server.call('POST', '/api/v1/apikeys', { token: user.token, body: { name: 'x', permissions: [] } })).body
        .error.details,
    ).toEqual({ expiresAt: 'is required' });
    for (let i = 0; i < 50; i++)
      await server.call('POST', '/api/v1/apikeys', {
        token: user.token,
        body: { name: `k${i}`, permissions: [], expiresAt },
      });
    expect(
      (
        await server.call('POST', '/api/v1/apikeys', {
          token: user.token,
          body: { name: 'k51', permissions: [], expiresAt },
        })
      ).status,
    ).toBe(422);
  });

  it('loses a permission when its owner loses it', async () => {
    const user = await server.user();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const { body } = await server.call('POST', '/api/v1/apikeys', {
      token: user.token,
      body: { name: 'w', permissions: ['articles:create'], expiresAt },
    });
    expect(
      (await server.call('POST', '/api/v1/articles', { token: body.data.token, body: { title: 't', body: 'b' } }))
        .status,
    ).toBe(201);
    await server.call('PUT', `/api/v1/users/${user.id}`, { token: admin.token, body: { roles: ['MODERATOR'] } });
    expect(
      (await server.call('POST', '/api/v1/articles', { token: body.data.token, body: { title: 't', body: 'b' } }))
        .status,
    ).toBe(403);
  });
});

describe('tenancy', () => {
  it('keeps each tenant to its own records, in lists, gets, updates and populate', async () => {
    const alice = await server.user({ displayName: 'Alice' });
    const bob = await server.user({ displayName: 'Bob' });
    const loner = await server.user();
    const orgA = await server.call('POST', '/api/v1/organizations', {
      token: admin.token,
      body: { name: 'A', members: [alice.id] },
    });
    await server.call('POST', '/api/v1/organizations', { token: admin.token, body: { name: 'B', members: [bob.id] } });

    const pa = await server.call('POST', '/api/v1/projects', {
      token: alice.token,
      body: { name: 'Alpha', code: 'T-A' },
    });
    expect(pa.status).toBe(201);
    expect(pa.body.data.tenantId).toBe(orgA.body.data.id);
    const pb = await server.call('POST', '/api/v1/projects', { token: bob.token, body: { name: 'Beta', code: 'T-B' } });

    const aliceList = await server.call('GET', '/api/v1/projects', { token: alice.token });
    expect(aliceList.body.data.items.map((p: { name: string }) => p.name)).toEqual(['Alpha']);
    expect((await server.call('GET', `/api/v1/projects/${pb.body.data.id}`, { token: alice.token })).status).toBe(404);
    expect(
      (await server.call('PATCH', `/api/v1/projects/${pb.body.data.id}`, { token: alice.token, body: { name: 'x' } }))
        .status,
    ).toBe(404);
    expect((await server.call('GET', '/api/v1/projects', { token: loner.token })).body.data.items).toEqual([]);
    expect(
      (await server.call('POST', '/api/v1/projects', { token: loner.token, body: { name: 'x', code: 'T-X' } })).status,
    ).toBe(422);
    expect(
      (await server.call('GET', '/api/v1/projects', { token: alice.token, headers: { 'x-tenant-id': '0'.repeat(24) } }))
        .status,
    ).toBe(403);
    const all = await server.call('GET', '/api/v1/projects?limit=200', { token: admin.token });
    expect(all.body.data.items.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['Alpha', 'Beta']));
  });

  it('holds unique fields per tenant: a taken value in one tenant tells another nothing', async () => {
    const carol = await server.user({ displayName: 'Carol' });
    const dave = await server.user({ displayName: 'Dave' });
    for (const [name, member] of [
      ['Unique C', carol],
      ['Unique D', dave],
    ] as const)
      expect(
        (
          await server.call('POST', '/api/v1/organizations', {
            token: admin.token,
            body: { name, members: [member.id] },
          })
        ).status,
      ).toBe(201);
    const make = (who: { token: string }, name: string) =>
      server.call('POST', '/api/v1/projects', { token: who.token, body: { name, code: 'SAME-CODE' } });
    expect((await make(carol, 'Carol’s')).status).toBe(201);
    // Another tenant may use the same code: no 409 that would tell it Carol's tenant holds it.
    expect((await make(dave, 'Dave’s')).status).toBe(201);
    // Within one tenant it is still unique.
    const again = await make(carol, 'Carol’s again');
    expect(again.status).toBe(409);
    expect(again.body.error.details).toEqual({ code: expect.any(String) });
  });

  it('asks for x-tenant-id when the caller is in several tenants', async () => {
    const carol = await server.user();
    const one = await server.call('POST', '/api/v1/organizations', {
      token: admin.token,
      body: { name: 'C1', members: [carol.id] },
    });
    await server.call('POST', '/api/v1/organizations', {
      token: admin.token,
      body: { name: 'C2', members: [carol.id] },
    });
    const res = await server.call('POST', '/api/v1/projects', { token: carol.token, body: { name: 'x', code: 'T-C' } });
    expect(res.status).toBe(400);
    // The error names the choice: each tenant's id and name.
    expect(res.body.error.details['x-tenant-id']).toMatch(
      new RegExp(`^is required: one of .*${one.body.data.id} \\(C1\\)`),
    );
    expect(res.body.error.details['x-tenant-id']).toContain('(C2)');
    const picked = await server.call('POST', '/api/v1/projects', {
      token: carol.token,
      headers: { 'x-tenant-id': one.body.data.id },
      body: { name: 'x', code: 'T-C' },
    });
    expect(picked.body.data.tenantId).toBe(one.body.data.id);
  });
});

describe('tenant membership', () => {
  it('changes only by the tenant owner or an admin; a member may leave; strangers cannot be added by others', async () => {
    const owner = await server.user();
    const editor = await server.user();
    const victim = await server.user();
    const org = await server.call('POST', '/api/v1/organizations', {
      token: owner.token,
      body: { name: 'Owned org', members: [owner.id, editor.id] },
    });
    const id = org.body.data.id;
    // The editor may edit the record through a grant, but not its members.
    await server.call('POST', '/api/v1/grants', {
      token: owner.token,
      body: { entity: 'organizations', entityId: id, grantedTo: editor.id, permissions: ['view', 'edit'] },
    });
    const members = (list: string[], token: string) =>
      server.call('PATCH', `/api/v1/organizations/${id}`, { token, body: { members: list } });
    const pushed = await members([owner.id, editor.id, victim.id], editor.token);
    expect(pushed.status).toBe(403);
    expect(pushed.body.error.details).toHaveProperty('members');
    expect(
      (await server.call('PATCH', `/api/v1/organizations/${id}`, { token: editor.token, body: { name: 'Renamed' } }))
        .status,
    ).toBe(200);
    expect((await members([editor.id], editor.token)).status).toBe(403);
    // Leaving is allowed.
    expect((await members([owner.id], editor.token)).status).toBe(200);
    // The owner and admins may change members.
    expect((await members([owner.id, victim.id], owner.token)).status).toBe(200);
    expect((await members([owner.id], admin.token)).status).toBe(200);
  });
});

describe('mass assignment', () => {
  it('refuses server-set fields in bodies', async () => {
    const user = await server.user();
    const res = await server.call('POST', '/api/v1/projects', {
      token: user.token,
      body: { name: 'x', code: 'M-1', ownerId: admin.id, tenantId: admin.id, archivedAt: null },
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.error.details).sort()).toEqual(['archivedAt', 'ownerId', 'tenantId']);
    const role = await server.call('POST', '/api/v1/auth/register', {
      body: {
        email: 'mass@example.test',
        password: 'correct horse battery staple!',
        displayName: 'M',
        roles: ['ADMIN'],
      },
    });
    expect(role.status).toBe(400);
    const system = await server.call('PUT', `/api/v1/users/${user.id}`, {
      token: user.token,
      body: { isSystem: true },
    });
    expect(system.status).toBe(400);
  });
});

describe('grants', () => {
  it('shares one record past ownership, for the granted actions only, until it expires', async () => {
    const owner = await server.user();
    const friend = await server.user();
    const article = await server.call('POST', '/api/v1/articles', {
      token: owner.token,
      body: { title: 'Shared', body: 'b' },
    });
    const id = article.body.data.id;
    expect((await server.call('GET', `/api/v1/articles/${id}`, { token: friend.token })).status).toBe(404);

    const grant = await server.call('POST', '/api/v1/grants', {
      token: owner.token,
      body: { entity: 'articles', entityId: id, grantedTo: friend.id, permissions: ['view', 'edit'] },
    });
    expect(grant.status).toBe(201);
    expect((await server.call('GET', `/api/v1/articles/${id}`, { token: friend.token })).status).toBe(200);
    expect(
      (await server.call('GET', '/api/v1/articles', { token: friend.token })).body.data.items.map(
        (a: { id: string }) => a.id,
      ),
    ).toContain(id);
    expect(
      (await server.call('PATCH', `/api/v1/articles/${id}`, { token: friend.token, body: { title: 'By friend' } }))
        .status,
    ).toBe(200);
    expect((await server.call('DELETE', `/api/v1/articles/${id}`, { token: friend.token })).status).toBe(403);

    await server.call('PATCH', `/api/v1/grants/${grant.body.data.id}`, {
      token: owner.token,
      body: { expiresAt: '2001-01-01T00:00:00Z' },
    });
    expect((await server.call('GET', `/api/v1/articles/${id}`, { token: friend.token })).status).toBe(404);
  });

  it('ends a grant at its expiry by the clock alone, though what grants share is remembered between writes', async () => {
    let clock = Date.parse('2030-01-01T00:00:00.000Z');
    const timed = await startTestServer({}, { now: () => new Date(clock) });
    try {
      const owner = await timed.user();
      const friend = await timed.user();
      const id = (await timed.call('POST', '/api/v1/articles', { token: owner.token, body: { title: 'S', body: 'b' } }))
        .body.data.id;
      const expiresAt = new Date(clock + 3_600_000).toISOString();
      const grant = await timed.call('POST', '/api/v1/grants', {
        token: owner.token,
        body: { entity: 'articles', entityId: id, grantedTo: friend.id, permissions: ['view'], expiresAt },
      });
      expect(grant.status).toBe(201);
      const listed = async () =>
        (await timed.call('GET', '/api/v1/articles', { token: friend.token })).body.data.items.map(
          (a: { id: string }) => a.id,
        );
      for (let i = 0; i < 2; i++) {
        expect((await timed.call('GET', `/api/v1/articles/${id}`, { token: friend.token })).status).toBe(200);
        expect(await listed()).toContain(id);
      }
      clock += 2 * 3_600_000; // past the expiry; nothing was written since
      expect((await timed.call('GET', `/api/v1/articles/${id}`, { token: friend.token })).status).toBe(404);
      expect(await listed()).not.toContain(id);
    } finally {
      await timed.close();
    }
  });

  it('hand out only what the granter holds by role: no self-granted delete, no widening, no re-sharing', async () => {
    const owner = await server.user();
    const editor = await server.user();
    const third = await server.user();
    const article = await server.call('POST', '/api/v1/articles', {
      token: owner.token,
      body: { title: 'Guarded', body: 'b' },
    });
    const id = article.body.data.id;
    const grant = (token: string, grantedTo: string, permissions: string[]) =>
      server.call('POST', '/api/v1/grants', {
        token,
        body: { entity: 'articles', entityId: id, grantedTo, permissions },
      });

    // USER has no articles:delete, so it cannot give delete to anyone, itself included.
    const selfDelete = await grant(owner.token, owner.id, ['view', 'delete']);
    expect(selfDelete.status).toBe(403);
    expect(selfDelete.body.error.details).toEqual({
      permissions: 'delete is more than your role allows on this record',
    });
    expect((await server.call('DELETE', `/api/v1/articles/${id}`, { token: owner.token })).status).toBe(403);

    const shared = await grant(owner.token, editor.id, ['view', 'edit']);
    expect(shared.status).toBe(201);
    // The edit grantee may edit the record, but not pass on or widen what it was given.
    expect((await grant(editor.token, editor.id, ['delete'])).status).toBe(403);
    expect((await grant(editor.token, third.id, ['view'])).status).toBe(403);
    expect((await server.call('DELETE', `/api/v1/articles/${id}`, { token: editor.token })).status).toBe(403);
    // Nor may the granter widen its own grant past its role afterwards.
    const widen = await server.call('PATCH', `/api/v1/grants/${shared.body.data.id}`, {
      token: owner.token,
      body: { permissions: ['view', 'edit', 'delete'] },
    });
    expect(widen.status).toBe(403);
    expect((await server.call('GET', `/api/v1/articles/${id}`, { token: admin.token })).status).toBe(200);
    expect((await server.call('GET', `/api/v1/articles/${id}`, { token: third.token })).status).toBe(404);

    // A role that holds delete may share it.
    await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: {
        key: 'ARTICLE_DELETER',
        label: 'Deleter',
        permissions: [
          'articles:view',
          'articles:create',
          'articles:edit:own',
          'articles:delete:own',
          'grants:create',
          'grants:view:own',
        ],
      },
    });
    const deleter = await server.user({ roles: ['ARTICLE_DELETER'] });
    const own = await server.call('POST', '/api/v1/articles', {
      token: deleter.token,
      body: { title: 'Deletable', body: 'b' },
    });
    const handed = await server.call('POST', '/api/v1/grants', {
      token: deleter.token,
      body: { entity: 'articles', entityId: own.body.data.id, grantedTo: third.id, permissions: ['view', 'delete'] },
    });
    expect(handed.status, JSON.stringify(handed.body)).toBe(201);
    expect((await server.call('DELETE', `/api/v1/articles/${own.body.data.id}`, { token: third.token })).status).toBe(
      200,
    );
  });

  it('may be made only by someone who may edit the record, for a record that exists, inside its tenant', async () => {
    const owner = await server.user();
    const stranger = await server.user();
    const article = await server.call('POST', '/api/v1/articles', {
      token: owner.token,
      body: { title: 'Mine', body: 'b' },
    });
    const selfGrant = await server.call('POST', '/api/v1/grants', {
      token: stranger.token,
      body: { entity: 'articles', entityId: article.body.data.id, grantedTo: stranger.id, permissions: ['view'] },
    });
    expect(selfGrant.status).toBe(404);
    const missing = await server.call('POST', '/api/v1/grants', {
      token: owner.token,
      body: { entity: 'articles', entityId: '0'.repeat(24), grantedTo: stranger.id, permissions: ['view'] },
    });
    expect(missing.status).toBe(404);
    const badEntity = await server.call('POST', '/api/v1/grants', {
      token: owner.token,
      body: { entity: 'users', entityId: owner.id, grantedTo: stranger.id, permissions: ['view'] },
    });
    expect(badEntity.status).toBe(400);

    const member = await server.user();
    const outsider = await server.user();
    await server.call('POST', '/api/v1/organizations', {
      token: admin.token,
      body: { name: 'G', members: [member.id] },
    });
    const project = await server.call('POST', '/api/v1/projects', {
      token: member.token,
      body: { name: 'P', code: 'G-1' },
    });
    const across = await server.call('POST', '/api/v1/grants', {
      token: member.token,
      body: { entity: 'projects', entityId: project.body.data.id, grantedTo: outsider.id, permissions: ['view'] },
    });
    expect(across.status).toBe(422);

    const mine = await server.call('POST', '/api/v1/grants', {
      token: owner.token,
      body: { entity: 'articles', entityId: article.body.data.id, grantedTo: stranger.id, permissions: ['view'] },
    });
    const other = await server.call('POST', '/api/v1/articles', {
      token: stranger.token,
      body: { title: 'Theirs', body: 'b' },
    });
    const retarget = await server.call('PATCH', `/api/v1/grants/${mine.body.data.id}`, {
      token: owner.token,
      body: { entityId: other.body.data.id },
    });
    expect(retarget.status).toBe(404);
  });
});
