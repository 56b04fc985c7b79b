import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../generated/client.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

interface Group {
  key: Record<string, unknown>;
  count: number;
  sum?: Record<string, number>;
  avg?: Record<string, number | null>;
  min?: Record<string, number | string | null>;
  max?: Record<string, number | string | null>;
}

describe('aggregation', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let owner: { id: string; token: string };
  let reader: { id: string; token: string };
  let draftId: string;

  const aggregate = async (path: string, token?: string, headers?: Record<string, string>) => {
    const res = await server.call('GET', `/api/v1/${path}`, { token, headers });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { groups: Group[]; totalGroups: number };
  };
  const refused = async (path: string) => {
    const res = await server.call('GET', `/api/v1/${path}`, { token: admin.token });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    return res.body.error.details as Record<string, string>;
  };
  const article = async (token: string, body: Record<string, unknown>) => {
    const res = await server.call('POST', '/api/v1/articles', { token, body: { body: 'text', ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string };
  };

  beforeAll(async () => {
    server = await startTestServer();
    admin = await server.user({ roles: ['ADMIN'] });
    owner = await server.user();
    reader = await server.user();
    await article(admin.token, {
      title: 'N1',
      kind: 'news',
      status: 'published',
      views: 10,
      rating: 4,
      reviewedAt: '2024-03-30T23:30:00Z',
    });
    await article(admin.token, {
      title: 'N2',
      kind: 'news',
      status: 'published',
      views: 30,
      rating: 2,
      reviewedAt: '2024-03-31T22:30:00Z',
    });
    await article(admin.token, { title: 'G1', kind: 'guide', status: 'published', views: 5 });
    await article(admin.token, { title: 'O1', kind: 'opinion', status: 'draft', views: 7 });
    // The owner's private draft: nobody else's sums may include its 1000 views.
    draftId = (await article(owner.token, { title: 'Secret', kind: 'news', status: 'draft', views: 1000 })).id;
  });
  afterAll(() => server.close());

  it('groups by a filter field and answers count, sum, avg, min and max per group', async () => {
    const result = await aggregate(
      'articles/aggregate?groupBy=kind&sum=views&avg=rating&min=views,reviewedAt&max=views',
      admin.token,
    );
    expect(result).toEqual({
      totalGroups: 3,
      groups: [
        {
          key: { kind: 'guide' },
          count: 1,
          sum: { views: 5 },
          avg: { rating: null },
          min: { views: 5, reviewedAt: null },
          max: { views: 5 },
        },
        {
          key: { kind: 'news' },
          count: 3,
          sum: { views: 1040 },
          avg: { rating: 3 },
          min: { views: 10, reviewedAt: '2024-03-30T23:30:00.000Z' },
          max: { views: 1000 },
        },
        {
          key: { kind: 'opinion' },
          count: 1,
          sum: { views: 7 },
          avg: { rating: null },
          min: { views: 7, reviewedAt: null },
          max: { views: 7 },
        },
      ],
    });
  });

  it("applies the caller's access constraint before grouping: roles, ownership and grants", async () => {
    const views = (result: { groups: Group[] }) => result.groups.map((g) => [g.key.kind, g.count, g.sum?.views]);
    // USER sees published articles and its own.
    expect(views(await aggregate('articles/aggregate?groupBy=kind&sum=views', reader.token))).toEqual([
      ['guide', 1, 5],
      ['news', 2, 40],
    ]);
    expect(views(await aggregate('articles/aggregate?groupBy=kind&sum=views', owner.token))).toEqual([
      ['guide', 1, 5],
      ['news', 3, 1040],
    ]);
    // Anonymous callers: published only.
    expect(views(await aggregate('articles/aggregate?sum=views'))).toEqual([[undefined, 3, 45]]);
    const grant = await server.call('POST', '/api/v1/grants', {
      token: owner.token,
      body: { entity: 'articles', entityId: draftId, grantedTo: reader.id, permissions: ['view'] },
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    expect(views(await aggregate('articles/aggregate?groupBy=kind&sum=views&kind=news', reader.token))).toEqual([
      ['news', 3, 1040],
    ]);
    // Without view on the entity at all: 401 anonymous, 403 signed in.
    expect((await server.call('GET', '/api/v1/orders/aggregate')).status).toBe(401);
    for (const adminOnly of ['webhooks', 'webhookDeliveries', 'hookDeliveries']) {
      const res = await server.call('GET', `/api/v1/${adminOnly}/aggregate`, { token: reader.token });
      expect(res.status, adminOnly).toBe(403);
    }
  });

  it('keeps each tenant to its own records and leaves archived ones out unless asked', async () => {
    const alice = await server.user();
    const bob = await server.user();
    await server.call('POST', '/api/v1/organizations', {
      token: admin.token,
      body: { name: 'A', members: [alice.id] },
    });
    await server.call('POST', '/api/v1/organizations', { token: admin.token, body: { name: 'B', members: [bob.id] } });
    const project = async (token: string, code: string, hours: number) => {
      const res = await server.call('POST', '/api/v1/projects', { token, body: { name: code, code, hours } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data.id as string;
    };
    await project(alice.token, 'A-1', 3);
    const archived = await project(alice.token, 'A-2', 4);
    await project(bob.token, 'B-1', 100);
    expect((await server.call('POST', `/api/v1/projects/${archived}/archive`, { token: alice.token })).status).toBe(
      200,
    );
    const hours = (result: { groups: Group[] }) => result.groups.map((g) => [g.count, g.sum?.hours]);
    expect(hours(await aggregate('projects/aggregate?sum=hours', alice.token))).toEqual([[1, 3]]);
    expect(hours(await aggregate('projects/aggregate?sum=hours&includeArchived=true', alice.token))).toEqual([[2, 7]]);
    expect(hours(await aggregate('projects/aggregate?sum=hours', bob.token))).toEqual([[1, 100]]);
  });

  it('buckets a date field by week and month in a time zone, and sorts by a result column', async () => {
    const byWeek = await aggregate(
      'articles/aggregate?groupBy=reviewedAt:week&timeZone=Europe/Berlin&dateField=reviewedAt&dateFrom=2024-01-01',
      admin.token,
    );
    // 2024-03-31 23:30 UTC is Monday 1 April in Berlin (after the change to summer time).
    expect(byWeek.groups.map((g) => [g.key.reviewedAt, g.count])).toEqual([
      ['2024-03-25', 1],
      ['2024-04-01', 1],
    ]);
    const byMonthUtc = await aggregate(
      'articles/aggregate?groupBy=reviewedAt:month&dateField=reviewedAt&dateFrom=2024-01-01',
      admin.token,
    );
    expect(byMonthUtc.groups.map((g) => [g.key.reviewedAt, g.count])).toEqual([['2024-03-01', 2]]);
    const sorted = await aggregate('articles/aggregate?groupBy=kind&sum=views&sort=-sum.views&limit=2', admin.token);
    expect(sorted.groups.map((g) => g.key.kind)).toEqual(['news', 'opinion']);
    expect(sorted.totalGroups).toBe(3);
    const byCount = await aggregate('articles/aggregate?groupBy=kind,status&sort=-count,kind&skip=1', admin.token);
    // news/published (2) skipped; the ties on count in kind order, then status (the keys break ties).
    expect(byCount.groups.map((g) => [g.key.kind, g.key.status, g.count])).toEqual([
      ['guide', 'published', 1],
      ['news', 'draft', 1],
      ['opinion', 'draft', 1],
    ]);
  });

  it('takes the list filters, q and date parameters', async () => {
    const published = await aggregate('articles/aggregate?status=published&kind[ne]=guide&sum=views', admin.token);
    expect(published.groups).toEqual([{ key: {}, count: 2, sum: { views: 40 } }]);
    const searched = await aggregate('articles/aggregate?q=secret&groupBy=status', admin.token);
    expect(searched.groups).toEqual([{ key: { status: 'draft' }, count: 1 }]);
    const none = await aggregate('articles/aggregate?dateFrom=2001-01-01&dateTo=2001-01-31&sum=views', admin.token);
    expect(none).toEqual({ groups: [{ key: {}, count: 0, sum: { views: 0 } }], totalGroups: 1 });
  });

  it('refuses what it cannot group or aggregate, naming the parameter', async () => {
    expect(await refused('projects/aggregate?groupBy=deployToken')).toEqual({
      groupBy: '"deployToken" is encrypted and cannot be grouped',
    });
    expect(await refused('projects/aggregate?max=deployToken')).toEqual({
      max: '"deployToken" is encrypted and cannot be aggregated',
    });
    expect((await refused('articles/aggregate?groupBy=tags')).groupBy).toBe('"tags" is an array and cannot be grouped');
    expect((await refused('articles/aggregate?groupBy=title')).groupBy).toMatch(/^"title" is not a filter of articles/);
    expect((await refused('articles/aggregate?groupBy=kind:month')).groupBy).toMatch(/is not a date field/);
    expect((await refused('articles/aggregate?groupBy=reviewedAt:hour')).groupBy).toMatch(/day, week, month, year/);
    expect((await refused('articles/aggregate?groupBy=kind,status,level,featured')).groupBy).toBe(
      'must name at most 3 fields',
    );
    expect((await refused('articles/aggregate?groupBy=kind,kind')).groupBy).toBe('names kind twice');
    expect((await refused('articles/aggregate?sum=title')).sum).toBe('"title" is not a number field (int or float)');
    expect((await refused('articles/aggregate?avg=nothing')).avg).toBe('unknown field "nothing"');
    expect((await refused('articles/aggregate?groupBy=kind&sort=-views')).sort).toMatch(/is not a result column/);
    expect((await refused('articles/aggregate?limit=1001')).limit).toBe('must be an integer from 1 to 1000');
    expect((await refused('articles/aggregate?timeZone=Mars/Olympus')).timeZone).toMatch(/IANA time zone/);
    expect((await refused('articles/aggregate?select=title')).select).toBe('is not a known query parameter');
    expect((await refused('articles/aggregate?views[gt]=1')).views).toBe('is not a known query parameter');
    expect((await refused('articles/aggregate?kind[gt]=news'))['kind[gt]']).toMatch(/does not apply/);
  });

  it('is in the typed client', async () => {
    const client = createClient({ baseUrl: server.url, token: admin.token });
    const result = await client.articles.aggregate({ groupBy: ['kind'], sum: ['views'], sort: ['-count'], limit: 1 });
    expect(result.groups).toEqual([{ key: { kind: 'news' }, count: 3, sum: { views: 1040 } }]);
    expect(result.totalGroups).toBe(3);
  });
});
