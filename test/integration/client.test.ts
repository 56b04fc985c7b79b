import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRequestError, type Client, createClient, type RealtimeEvents } from '../../generated/client.js';
import { checkedFetch } from '../support/openApiCheck.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

// Everything here goes through generated/client.ts, every answer checked against openapi.json;
// the server starts with a headless admin.
const ADMIN = { email: 'client-admin@example.test', password: 'correct horse battery staple!' };
let server: TestServer;
let admin: Client;

beforeAll(async () => {
  server = await startTestServer(
    { ENTIGEN_ADMIN_EMAIL: ADMIN.email, ENTIGEN_ADMIN_PASSWORD: ADMIN.password },
    { withAdmin: false },
  );
  admin = createClient({ fetch: checkedFetch, baseUrl: server.url });
  await admin.auth.login(ADMIN);
});
afterAll(() => server.close());

describe('generated client', () => {
  it('signs up with a session cookie and runs every generic operation, typed', async () => {
    const client = createClient({ fetch: checkedFetch, baseUrl: server.url, cookies: true });
    const { user } = await client.auth.register({
      email: 'writer@example.test',
      password: 'a long passphrase 1!',
      displayName: 'Writer',
    });
    expect((await client.auth.me()).user.id).toBe(user.id);

    const created = await client.articles.create(
      { title: 'Typed client', body: 'First body', tags: ['sdk'], price: 10 },
      { idempotencyKey: 'client-create-1' },
    );
    expect(created).toMatchObject({ title: 'Typed client', views: 0, ownerId: user.id, status: 'draft' });
    const replayed = await client.articles.create(
      { title: 'Typed client', body: 'First body', tags: ['sdk'], price: 10 },
      { idempotencyKey: 'client-create-1' },
    );
    expect(replayed.id).toBe(created.id);
    expect((await client.articles.get(created.id)).title).toBe('Typed client');

    const bulk = await client.articles.bulk([
      { title: 'Bulk one', body: 'b' },
      { title: 'Bulk two', body: 'b', kind: 'guide' },
    ]);
    expect(bulk.count).toBe(2);
    const guides = await client.articles.list({ kind: 'guide', select: ['title'], sort: 'title' });
    expect(guides.items.map((a) => a.title)).toEqual(['Bulk two']);
    expect(Object.keys(guides.items[0]).sort()).toEqual(['id', 'title']);
    const tagged = await client.articles.list({ tags: 'sdk', q: 'typed' });
    expect(tagged.totalCount).toBe(1);

    const updated = await client.articles.update(
      created.id,
      { body: 'Second body', price: 12 },
      { changeReason: 'edited through the client' },
    );
    expect(updated.body).toBe('Second body');
    expect((await client.articles.increment(created.id, { views: 5 })).views).toBe(5);

    const versions = await client.articles.versions(created.id);
    expect(versions.items.map((v) => v.changeType)).toEqual(['update', 'update', 'create']);
    expect(versions.items[1].changeReason).toBe('edited through the client');
    const comparison = await client.articles.compareVersions(created.id, 1, 2);
    expect(comparison.changes.find((c) => c.field === 'body')).toMatchObject({
      oldValue: 'First body',
      newValue: 'Second body',
      changed: true,
    });
    expect((await client.articles.version(created.id, 1)).snapshot.body).toBe('First body');
    const reverted = await client.articles.revert(created.id, 1, 'back to the first');
    expect(reverted).toMatchObject({ success: true, revertedTo: 1, entity: { body: 'First body' } });

    const changes = await client.articles.fieldChanges(created.id, { fieldName: 'price' });
    // Newest first: the revert's change, then the update's.
    expect(changes.items.map((c) => [c.oldValue, c.newValue, c.approvalStatus])).toEqual([
      [12, 10, 'pending'],
      [10, 12, 'pending'],
    ]);
    expect(
      await admin.articles.decideFieldChange(created.id, changes.items[1].id, { approvalStatus: 'approved' }),
    ).toMatchObject({ approvalStatus: 'approved' });

    await client.articles.archive(bulk.items[0].id);
    expect((await client.articles.list({ q: 'bulk' })).totalCount).toBe(1);
    expect((await client.articles.list({ q: 'bulk', includeArchived: true })).totalCount).toBe(2);
    await client.articles.restore(bulk.items[0].id);
    // USER holds no delete permission; the admin removes it.
    await expect(client.articles.remove(bulk.items[1].id)).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect(await admin.articles.remove(bulk.items[1].id)).toEqual({ id: bulk.items[1].id, deleted: true });

    const found = await client.search('typed');
    expect(found.items.map((hit) => hit.id)).toContain(created.id);

    await client.auth.logout();
    await expect(client.auth.me()).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('subscribes to realtime events, typed, resumes after lastEventId and reports refusals', async () => {
    const events: RealtimeEvents['articles' | 'comments'][] = [];
    const subscription = admin.subscribe(['articles', 'comments'], (event) => events.push(event));
    // The stream is open once an event written after subscribing arrives.
    let first: Awaited<ReturnType<typeof admin.articles.create>> | undefined;
    for (let i = 0; i < 50 && !events.some((e) => e.data.id === first?.id); i++) {
      first = await admin.articles.create({ title: `Live ${i}`, body: 'b' });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const arrived = events.find((e) => e.data.id === first!.id)!;
    expect(arrived.type).toBe('articles.created');
    if (arrived.type === 'articles.created') expect(arrived.data.title).toBe(first!.title);
    const resumeFrom = subscription.lastEventId;
    expect(resumeFrom).toBe(arrived.id);
    subscription.close();
    await subscription.closed;

    const missed = await admin.articles.create({ title: 'Missed', body: 'b' });
    await admin.articles.remove(missed.id);
    const replay: RealtimeEvents['articles'][] = [];
    const resumed = admin.subscribe(['articles'], (event) => replay.push(event), { lastEventId: resumeFrom });
    for (let i = 0; i < 100 && replay.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    resumed.close();
    expect(replay.map((e) => [e.type, e.data.id])).toEqual([
      ['articles.created', missed.id],
      ['articles.deleted', missed.id],
    ]);

    const anonymous = createClient({ fetch: checkedFetch, baseUrl: server.url });
    const refused = await new Promise<ApiRequestError>((resolve) =>
      anonymous.subscribe(['projects'], () => undefined, { onError: resolve }),
    );
    expect(refused).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('throws typed errors with status, code and details', async () => {
    const client = createClient({ fetch: checkedFetch, baseUrl: server.url });
    await client.auth.register({
      email: 'errors@example.test',
      password: 'a long passphrase 2!',
      displayName: 'Errors',
    });
    const invalid = await client.articles
      .create({ title: '', body: 'x', views: 'many' as unknown as number })
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(ApiRequestError);
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_ERROR', details: { views: expect.any(String) } });
    expect((invalid as ApiRequestError).correlationId).toMatch(/^[0-9a-f-]{36}$/);
    await expect(client.articles.get('0123456789abcdef01234567')).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
    await expect(client.articles.list({ limit: 500 })).rejects.toMatchObject({
      status: 400,
      details: { limit: expect.any(String) },
    });
  });

  it('manages accounts and roles as an administrator, with the answers typed from the route declarations', async () => {
    const role = await admin.roles.create({ key: 'EDITOR', label: 'Editor', permissions: ['articles:view:all'] });
    expect(role).toMatchObject({ key: 'EDITOR', permissions: ['articles:view:all'] });
    expect((await admin.roles.list()).items.map((r) => r.key)).toContain('EDITOR');
    expect((await admin.roles.availablePermissions()).some((p) => p.key === 'articles:view')).toBe(true);
    const created = await admin.users.create({
      email: 'edited@example.test',
      displayName: 'Edited',
      roles: ['EDITOR'],
    });
    expect(created).toMatchObject({ email: 'edited@example.test', roles: ['EDITOR'], authSource: 'local' });
    const page = await admin.users.list({ limit: 200 });
    expect(page.items.map((u) => u.id)).toContain(created.id);
    const renamed = await admin.users.update(created.id, { displayName: 'Renamed', disabled: true });
    expect(renamed).toMatchObject({ displayName: 'Renamed', disabled: true });
    expect(await admin.roles.update('EDITOR', { label: 'Editors' })).toMatchObject({ label: 'Editors' });
    // A refused body names the field, as the declaration reads it.
    await expect(admin.users.update(created.id, { displayName: '   ' })).rejects.toMatchObject({
      status: 400,
      details: { displayName: 'must not be empty' },
    });
    const member = createClient({ fetch: checkedFetch, baseUrl: server.url });
    await member.auth.register({ email: 'not-admin@example.test', password: 'a long passphrase 5!', displayName: 'N' });
    await expect(member.users.list()).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' });
    await expect(member.roles.remove('EDITOR')).rejects.toMatchObject({ status: 403 });
    expect(await admin.roles.remove('EDITOR')).toEqual({ key: 'EDITOR', deleted: true });
  });

  it('works with an API key that holds only the permissions it was given', async () => {
    const owner = createClient({ fetch: checkedFetch, baseUrl: server.url });
    await owner.auth.register({ email: 'keys@example.test', password: 'a long passphrase 3!', displayName: 'Keys' });
    const mine = await owner.articles.create({ title: 'Key readable', body: 'k' });
    const key = await owner.apiKeys.create({
      name: 'reader',
      permissions: ['articles:view:own'],
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(key.token).toMatch(/^egk_/);
    expect((await owner.apiKeys.list()).items.map((k) => k.lastEight)).toEqual([key.lastEight]);

    const reader = createClient({ fetch: checkedFetch, baseUrl: server.url, apiKey: key.token });
    expect((await reader.articles.list()).items.map((a) => a.id)).toEqual([mine.id]);
    await expect(reader.articles.create({ title: 'no', body: 'no' })).rejects.toMatchObject({
      status: 403,
      code: 'FORBIDDEN',
    });
    await owner.apiKeys.revoke(key.id);
    await expect(reader.articles.list()).rejects.toMatchObject({ status: 401 });
  });

  it('acts in the tenant named by tenantId, and the simple-versioning audit log reads through it', async () => {
    const member = createClient({ fetch: checkedFetch, baseUrl: server.url });
    const { user } = await member.auth.register({
      email: 'member@example.test',
      password: 'a long passphrase 4!',
      displayName: 'Member',
    });
    const first = await admin.organizations.create({ name: 'First', members: [user.id] });
    await admin.organizations.create({ name: 'Second', members: [user.id] });
    // Two tenants and none named: a create cannot pick one.
    await expect(member.projects.create({ name: 'P', code: 'P-1' })).rejects.toMatchObject({ status: 400 });
    const inFirst = createClient({
      fetch: checkedFetch,
      baseUrl: server.url,
      token: (await member.auth.login({ email: 'member@example.test', password: 'a long passphrase 4!' })).token,
      tenantId: first.id,
    });
    const project = await inFirst.projects.create({ name: 'P', code: 'P-1' });
    expect(project.tenantId).toBe(first.id);
    await inFirst.projects.update(project.id, { hours: 3 });
    const audit = await inFirst.projects.audit(project.id);
    expect(audit.items.map((entry) => entry.changeType)).toEqual(['update', 'create']);
  });

  it('reads and writes localized fields in a locale, or every locale at once', async () => {
    const made = await admin.faqs.create({ question: { en: 'Typed?', de: 'Typisiert?' }, position: 3 });
    expect(made.question).toBe('Typed?');
    expect(made._locales).toEqual({ question: 'en', position: 'en' });
    const german = await admin.faqs.get(made.id, { locale: 'de' });
    expect(german.question).toBe('Typisiert?');
    const french = await admin.faqs.update(made.id, { question: 'Typé ?' }, { locale: 'fr' });
    expect(french).toMatchObject({ question: 'Typé ?', _locales: { question: 'fr' } });
    const all = await admin.faqs.list({ locale: '*', question: 'Typed?' });
    expect(all.items.map((f) => f.question)).toEqual([{ en: 'Typed?', de: 'Typisiert?', fr: 'Typé ?' }]);
    const groups = await admin.faqs.aggregate({ locale: 'de', groupBy: ['topic'], sum: ['position'] });
    expect(groups.groups.length).toBeGreaterThan(0);
  });

  it('sends a batch built from typed steps, later steps naming earlier answers, and answers each typed', async () => {
    const [product, order, approved, binned] = await admin.batch((b) => {
      const kettle = b.products.create({ name: 'Batch kettle', sku: 'CB-1', price: 5, stock: 3 });
      const placed = b.orders.create({ product: kettle.ref('id'), quantity: 1 });
      const approval = b.orders.endpoint('approve', placed.ref('id'), { note: 'fine' });
      const note = b.notes.create({ title: 'Batch note' });
      return [kettle, placed, approval, note, b.notes.remove(note.ref('id'))] as const;
    });
    // Typed per step, each as it answered then: the product before the order took its stock.
    const stock: number | null | undefined = product.stock;
    expect(stock).toBe(3);
    expect((await admin.products.get(product.id)).stock).toBe(2);
    expect(order.product).toBe(product.id);
    expect(approved).toMatchObject({ id: order.id, status: 'approved' });
    expect(binned.title).toBe('Batch note');
    expect((await admin.notes.list({ trash: 'only' })).items.map((n) => n.id)).toContain(binned.id);

    const failed = await admin
      .batch((b) => [
        b.products.create({ name: 'Never', sku: 'CB-2', price: 1 }),
        b.products.update('0'.repeat(24), {}),
      ])
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ApiRequestError);
    expect((failed as ApiRequestError).status).toBe(404);
    expect((failed as ApiRequestError).details?.operation).toBe('1');
    expect((await admin.products.list({ q: 'Never' })).totalCount).toBe(0);
    await expect(
      admin.batch((b) => [b.notes.create({ title: 'b' }), b.notes.create({ title: 'a' })].reverse()),
    ).rejects.toThrow(/in the order you made them/);
  });
});
