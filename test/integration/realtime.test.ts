import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pruneEvents } from '../../runtime/write/eventLog.js';
import { openSse, type SseEvent, type SseStream } from '../support/sse.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

const REALTIME = {
  maxStreamsPerUser: 8,
  maxStreams: 100,
  eventsPerSecond: 1000,
  heartbeatMs: 300,
  pollMs: 1000,
  slowConsumerMs: 5000,
};

/** Waits until the server groups as many streams as expected, then checks its groups. */
async function expectGrouping(server: TestServer, expected: { groups: number; grouped: number }): Promise<void> {
  for (let i = 0; i < 100 && server.realtime.grouping.grouped < expected.grouped; i++)
    await new Promise((resolve) => setTimeout(resolve, 20));
  expect(server.realtime.grouping).toEqual(expected);
}

/** The bodies of the chunks of a chunked HTTP answer (the head before them skipped). */
function chunkBodies(raw: Buffer): string[] {
  const bodies: string[] = [];
  let at = raw.indexOf('\r\n\r\n') + 4;
  while (at < raw.length) {
    const line = raw.indexOf('\r\n', at);
    if (line < 0) break;
    const size = Number.parseInt(raw.subarray(at, line).toString(), 16);
    if (!(size > 0) || line + 2 + size > raw.length) break;
    bodies.push(raw.subarray(line + 2, line + 2 + size).toString());
    at = line + 2 + size + 2;
  }
  return bodies;
}

/** The ids of the created articles in SSE text, in order. */
const createdIn = (text: string) =>
  [...text.matchAll(/^event: articles\.created\ndata: (.*)$/gm)].map((line) => JSON.parse(line[1]).id as string);

/** A server that sends each stream at most `eventsPerSecond`, its administrator, and their streams. */
async function heldServer(eventsPerSecond: number) {
  const server = await startTestServer(
    {},
    { overrides: { rateLimit: GENEROUS_LIMITS, realtime: { ...REALTIME, eventsPerSecond, heartbeatMs: 60_000 } } },
  );
  const admin = await server.user({ roles: ['ADMIN'] });
  const streams: SseStream[] = [];
  const subscribe = async () => {
    const stream = await openSse(`${server.url}/api/v1/realtime?entities=articles`, { token: admin.token });
    streams.push(stream);
    return stream;
  };
  const close = async () => {
    for (const stream of streams) stream.close();
    await server.close();
  };
  return { server, admin, subscribe, close };
}

/** The ids of the created articles a stream received, in order. */
const createdIds = (stream: SseStream) =>
  stream.events.filter((e) => e.event === 'articles.created').map((e) => e.data.id as string);

describe('realtime over Server-Sent Events', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  const open: SseStream[] = [];
  const subscribe = async (query: string, token?: string, headers?: Record<string, string>) => {
    const stream = await openSse(`${server.url}/api/v1/realtime?${query}`, { token, headers });
    open.push(stream);
    return stream;
  };
  /** A write that every admin stream sees: when it arrives, everything before it has too. */
  const marker = async (stream: SseStream) => {
    const made = await server.call('POST', '/api/v1/articles', {
      token: admin.token,
      body: { title: 'marker', body: 'm', status: 'published' },
    });
    await stream.next((e) => e.event === 'articles.created' && e.data.id === made.body.data.id);
  };
  const ids = (events: SseEvent[], id: string) => events.filter((e) => e.data?.id === id).map((e) => e.event);

  beforeAll(async () => {
    server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS, realtime: REALTIME } });
    admin = (await server.user({ roles: ['ADMIN'] })) as { id: string; token: string };
  });
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    // The server notices the closed connections before the next test counts streams.
    await new Promise((resolve) => setTimeout(resolve, 50));
  });
  afterAll(() => server.close());

  it('sends each subscriber exactly what its list shows, and a delete-like event when a record leaves it', async () => {
    const reader = await server.user();
    const adminStream = await subscribe('entities=articles', admin.token);
    const readerStream = await subscribe('entities=articles', reader.token);
    expect(adminStream.status).toBe(200);
    expect(adminStream.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const draft = (
      await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title: 'Draft', body: 'b' } })
    ).body.data;
    await server.call('PATCH', `/api/v1/articles/${draft.id}`, {
      token: admin.token,
      body: { status: 'published' },
    });
    await server.call('PATCH', `/api/v1/articles/${draft.id}`, { token: admin.token, body: { status: 'draft' } });
    await server.call('DELETE', `/api/v1/articles/${draft.id}`, { token: admin.token });
    await marker(adminStream);
    await marker(readerStream);

    expect(ids(adminStream.events, draft.id)).toEqual([
      'articles.created',
      'articles.updated',
      'articles.updated',
      'articles.deleted',
    ]);
    // The reader may only see published articles: it sees the record arrive, then leave.
    const seen = readerStream.events.filter((e) => e.data?.id === draft.id);
    expect(seen.map((e) => e.event)).toEqual(['articles.updated', 'articles.deleted']);
    expect(seen[0].data).toMatchObject({ id: draft.id, title: 'Draft', status: 'published' });
    expect(seen[1].data).toEqual({ id: draft.id, reason: 'hidden' });
    // Ids are the log's sequence numbers, rising.
    const seqs = adminStream.events.map((e) => Number(e.id));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('keeps tenants and owners apart, masks encrypted fields and leaves hidden ones out', async () => {
    const alice = await server.user({ displayName: 'Alice' });
    const carol = await server.user({ displayName: 'Carol' });
    const bob = await server.user({ displayName: 'Bob' });
    const orgA = (
      await server.call('POST', '/api/v1/organizations', {
        token: admin.token,
        body: { name: 'RT-A', members: [alice.id, carol.id] },
      })
    ).body.data;
    const orgB = (
      await server.call('POST', '/api/v1/organizations', {
        token: admin.token,
        body: { name: 'RT-B', members: [bob.id] },
      })
    ).body.data;
    const streams = {
      alice: await subscribe('entities=projects', alice.token),
      carol: await subscribe('entities=projects', carol.token),
      bob: await subscribe('entities=projects', bob.token),
      adminA: await subscribe(`entities=projects,articles&tenant=${orgA.id}`, admin.token),
      adminB: await subscribe('entities=projects,articles', admin.token, { 'x-tenant-id': orgB.id }),
    };
    const alpha = (
      await server.call('POST', '/api/v1/projects', {
        token: alice.token,
        body: { name: 'Alpha', code: 'RT-ALPHA', deployToken: 'secret-token' },
      })
    ).body.data;
    const beta = (
      await server.call('POST', '/api/v1/projects', { token: bob.token, body: { name: 'Beta', code: 'RT-BETA' } })
    ).body.data;
    const created = await streams.alice.next((e) => e.data?.id === alpha.id);
    expect(created.event).toBe('projects.created');
    expect(created.data).toMatchObject({ name: 'Alpha', tenantId: orgA.id, ownerId: alice.id });
    expect(created.data.deployToken).not.toBe('secret-token');
    await streams.bob.next((e) => e.data?.id === beta.id);
    await streams.adminA.next((e) => e.data?.id === alpha.id);
    await streams.adminB.next((e) => e.data?.id === beta.id);
    await marker(streams.adminA);
    await marker(streams.adminB);
    // Let the user streams take the events the admins already have.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ids(streams.alice.events, beta.id)).toEqual([]);
    expect(ids(streams.bob.events, alpha.id)).toEqual([]);
    // Carol shares Alice's tenant but projects are viewed by owner.
    expect(streams.carol.events).toEqual([]);
    expect(ids(streams.adminA.events, beta.id)).toEqual([]);
    expect(ids(streams.adminB.events, alpha.id)).toEqual([]);
  });

  it('resumes after Last-Event-ID with every missed event once, in order', async () => {
    const first = await subscribe('entities=articles', admin.token);
    const a = (await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title: 'R1', body: 'b' } }))
      .body.data;
    const seen = await first.next((e) => e.data?.id === a.id);
    first.close();
    const later: string[] = [];
    for (const title of ['R2', 'R3', 'R4']) {
      later.push(
        (await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title, body: 'b' } })).body.data
          .id,
      );
    }
    await server.call('PATCH', `/api/v1/articles/${later[0]}`, { token: admin.token, body: { views: 5 } });
    const resumed = await subscribe('entities=articles', admin.token, { 'last-event-id': seen.id! });
    await resumed.next((e) => e.event === 'articles.updated' && e.data.id === later[0]);
    expect(resumed.events.map((e) => [e.event, e.data.id])).toEqual([
      ['articles.created', later[0]],
      ['articles.created', later[1]],
      ['articles.created', later[2]],
      ['articles.updated', later[0]],
    ]);
    expect(resumed.events.some((e) => e.data.id === a.id)).toBe(false);
    // The query parameter does the same for clients that cannot send the header.
    const byQuery = await subscribe(`entities=articles&lastEventId=${seen.id}`, admin.token);
    await byQuery.next((e) => e.data.id === later[2]);
  });

  it('decides once for the streams that see alike: each owner still gets only their own drafts, and a grant at once', async () => {
    const readers = await Promise.all(Array.from({ length: 6 }, () => server.user()));
    const streams = await Promise.all(readers.map((reader) => subscribe('entities=articles', reader.token)));
    const adminStream = await subscribe('entities=articles', admin.token);
    await marker(adminStream);
    // The readers' constraints differ only by their own id: one group for them, one for the admin.
    await expectGrouping(server, { groups: 2, grouped: 7 });

    const [alice, bob] = readers;
    const draft = (
      await server.call('POST', '/api/v1/articles', { token: alice.token, body: { title: 'Mine', body: 'b' } })
    ).body.data;
    expect((await streams[0].next((e) => e.data?.id === draft.id)).event).toBe('articles.created');
    const published = (
      await server.call('POST', '/api/v1/articles', {
        token: admin.token,
        body: { title: 'For all', body: 'b', status: 'published' },
      })
    ).body.data;
    for (const stream of streams) await stream.next((e) => e.data?.id === published.id);
    expect(streams.slice(1).every((stream) => ids(stream.events, draft.id).length === 0)).toBe(true);

    // A grant shares the draft with Bob from the next event on, without waiting for a refresh.
    const granted = await server.call('POST', '/api/v1/grants', {
      token: alice.token,
      body: { entity: 'articles', entityId: draft.id, grantedTo: bob.id, permissions: ['view'] },
    });
    expect(granted.status).toBe(201);
    await server.call('PATCH', `/api/v1/articles/${draft.id}`, { token: alice.token, body: { title: 'Shared' } });
    const shared = await streams[1].next((e) => e.data?.id === draft.id);
    expect(shared).toMatchObject({ event: 'articles.updated', data: { title: 'Shared' } });
    await marker(adminStream);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(streams.slice(2).every((stream) => ids(stream.events, draft.id).length === 0)).toBe(true);
  });

  it('sends heartbeats, and tells a client that skipped events the id it reached', async () => {
    const stream = await subscribe('entities=comments', admin.token);
    await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title: 'Not a comment', body: 'b' } });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(stream.comments).toBeGreaterThan(0);
    expect(stream.events).toEqual([]);
    // No event was for it, but the id moved on: a reconnect does not read the skipped part again.
    expect(Number(stream.lastId)).toBeGreaterThan(0);
  });

  it('closes the stream of an API key revoked mid-stream, and of a session that signed out', async () => {
    const user = await server.user();
    const key = await server.call('POST', '/api/v1/apikeys', {
      token: user.token,
      body: {
        name: 'stream',
        permissions: ['comments:view:approved:true'],
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    const stream = await subscribe('entities=comments', key.body.data.token);
    expect(stream.status).toBe(200);
    await server.call('DELETE', `/api/v1/apikeys/${key.body.data.id}`, { token: user.token });
    const ended = await stream.next((e) => e.event === 'stream.error', 3000);
    expect(ended.data.error.code).toBe('UNAUTHORIZED');
    await stream.ended;

    const session = await server.user({ roles: ['ADMIN'] });
    const mine = await subscribe('entities=articles', session.token);
    await server.call('POST', '/api/v1/auth/logout', { token: session.token });
    expect((await mine.next((e) => e.event === 'stream.error', 3000)).data.error.code).toBe('UNAUTHORIZED');
  });

  it('keeps what the role of a stream shows through heartbeats, and hides drafts soon after the role is narrowed', async () => {
    const role = await server.call('POST', '/api/v1/roles', {
      token: admin.token,
      body: { key: 'DRAFT_READER', label: 'Draft reader', permissions: ['articles:view'] },
    });
    expect(role.status, JSON.stringify(role.body)).toBe(201);
    const reader = await server.user({ roles: ['DRAFT_READER'] });
    const author = await server.user({ roles: ['ADMIN'] });
    const stream = await subscribe('entities=articles', reader.token);
    expect(stream.status).toBe(200);
    const draft = async () =>
      (await server.call('POST', '/api/v1/articles', { token: author.token, body: { title: 'Draft', body: 'b' } })).body
        .data.id as string;
    const seen = await draft();
    await stream.next((e) => e.event === 'articles.created' && e.data.id === seen);
    // Several heartbeats with nothing changed keep what the role shows.
    await new Promise((resolve) => setTimeout(resolve, 3 * REALTIME.heartbeatMs));
    const stillSeen = await draft();
    await stream.next((e) => e.event === 'articles.created' && e.data.id === stillSeen);

    const narrowed = await server.call('PUT', '/api/v1/roles/DRAFT_READER', {
      token: admin.token,
      body: { permissions: ['articles:view:status:published'] },
    });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 3 * REALTIME.heartbeatMs));
    const hidden = await draft();
    const published = await server.call('POST', '/api/v1/articles', {
      token: author.token,
      body: { title: 'Out', body: 'b', status: 'published' },
    });
    await stream.next((e) => e.event === 'articles.created' && e.data.id === published.body.data.id);
    expect(ids(stream.events, hidden)).toEqual([]);
    await server.call('DELETE', '/api/v1/roles/DRAFT_READER', { token: admin.token });
  });

  it('answers 429 beyond the streams one user may hold', async () => {
    const user = await server.user();
    for (let i = 0; i < REALTIME.maxStreamsPerUser; i++)
      expect((await subscribe('entities=comments', user.token)).status).toBe(200);
    const refused = (await subscribe('entities=comments', user.token)) as SseStream & { body: any };
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(refused.body.error.message).toMatch(/realtime streams open/);
  });

  it('refuses bad subscriptions with a 400 naming the parameter, and entities the caller may not list', async () => {
    const bad = async (query: string, token: string | null = admin.token) =>
      (await subscribe(query, token ?? undefined)) as SseStream & { body: any };
    expect((await bad('')).body.error.details.entities).toMatch(/required/);
    expect((await bad('entities=nope')).body.error.details.entities).toMatch(/nope/);
    expect((await bad('entities=changeEvents')).status).toBe(400);
    expect((await bad('entities=articles&limit=3')).body.error.details.limit).toBeDefined();
    expect((await bad('entities=articles&includeArchived=yes')).body.error.details.includeArchived).toBeDefined();
    expect((await bad('entities=articles&select=nothere')).body.error.details.select).toMatch(/nothere/);
    expect((await bad('entities=articles&lastEventId=abc')).body.error.details.lastEventId).toBeDefined();
    expect((await bad('entities=articles&lastEventId=999999999')).body.error.details.lastEventId).toMatch(/ahead/);
    expect((await bad('entities=projects', null)).status).toBe(401);
    const user = await server.user();
    expect((await bad('entities=hookDeliveries', user.token)).status).toBe(403);
  });

  it('sends only the selected fields, and archived records only when asked', async () => {
    const user = await server.user();
    const all = await subscribe('entities=comments&select=body', user.token);
    const archived = await subscribe('entities=comments&includeArchived=true', user.token);
    const article = (
      await server.call('POST', '/api/v1/articles', {
        token: admin.token,
        body: { title: 'A', body: 'b', status: 'published' },
      })
    ).body.data;
    const comment = (
      await server.call('POST', '/api/v1/comments', { token: user.token, body: { article: article.id, body: 'hi' } })
    ).body.data;
    expect((await all.next((e) => e.data.id === comment.id)).data).toEqual({ id: comment.id, body: 'hi' });
    await server.call('POST', `/api/v1/comments/${comment.id}/archive`, { token: user.token });
    const gone = await all.next((e) => e.event === 'comments.archived');
    expect(gone.data).toEqual({ id: comment.id });
    const kept = await archived.next((e) => e.event === 'comments.archived');
    expect(kept.data).toMatchObject({ id: comment.id, body: 'hi' });
    expect(kept.data.archivedAt).toEqual(expect.any(String));
  });

  it('tells a client whose events were pruned to reload', async () => {
    const stream = await subscribe('entities=articles', admin.token);
    const a = (await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title: 'P', body: 'b' } }))
      .body.data;
    const seen = await stream.next((e) => e.data.id === a.id);
    stream.close();
    await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title: 'P2', body: 'b' } });
    await pruneEvents(server.ctx.store, new Date(Date.now() + 60_000), Number.MAX_SAFE_INTEGER);
    const late = await subscribe('entities=articles', admin.token, { 'last-event-id': seen.id! });
    const error = await late.next((e) => e.event === 'stream.error');
    expect(error.data.error.code).toBe('EVENTS_EXPIRED');
    expect(error.data.error.message).toMatch(/reload/);
    await late.ended;
  });
});

describe('realtime at shutdown', () => {
  it('ends open streams when the server closes', async () => {
    const server = await startTestServer({}, { overrides: { rateLimit: GENEROUS_LIMITS, realtime: REALTIME } });
    const admin = await server.user({ roles: ['ADMIN'] });
    const stream = await openSse(`${server.url}/api/v1/realtime?entities=articles`, { token: admin.token });
    const started = Date.now();
    await server.close();
    await stream.ended;
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('realtime limits', () => {
  it('sends a stream at most its events per second, all of them in order', async () => {
    const server = await startTestServer(
      {},
      { overrides: { rateLimit: GENEROUS_LIMITS, realtime: { ...REALTIME, eventsPerSecond: 5 } } },
    );
    try {
      const admin = await server.user({ roles: ['ADMIN'] });
      const stream = await openSse(`${server.url}/api/v1/realtime?entities=articles`, { token: admin.token });
      const bulk = await server.call('POST', '/api/v1/articles/bulk', {
        token: admin.token,
        body: { items: Array.from({ length: 15 }, (_, i) => ({ title: `Rate ${i}`, body: 'b' })) },
      });
      const ids = bulk.body.data.items.map((a: { id: string }) => a.id);
      await new Promise((resolve) => setTimeout(resolve, 400));
      // Five at once, then one every 200 ms: far from all fifteen yet.
      expect(stream.events.length).toBeLessThan(15);
      await stream.next((e) => e.data.id === ids[14], 10_000);
      expect(stream.events.map((e) => e.data.id)).toEqual(ids);
      stream.close();
    } finally {
      await server.close();
    }
  });

  it('sends a stream held to its rate its waiting events in batches, one write each', async () => {
    // 50 a second: the bucket's 50 at once, then five every tenth of a second.
    const server = await startTestServer(
      {},
      {
        overrides: { rateLimit: GENEROUS_LIMITS, realtime: { ...REALTIME, eventsPerSecond: 50, heartbeatMs: 60_000 } },
      },
    );
    try {
      const admin = await server.user({ roles: ['ADMIN'] });
      const url = new URL(server.url);
      // A raw socket: each write of the server arrives as its own read here (an HTTP client would
      // hand over each chunk of the chunked body apart, however they were written).
      const chunks: { at: number; events: string[] }[] = [];
      const socket = connect(Number(url.port), url.hostname);
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        const events = [...chunk.matchAll(/^data: (.*)$/gm)].map((line) => JSON.parse(line[1]).id as string);
        if (events.length > 0) chunks.push({ at: Date.now(), events });
      });
      const opened = new Promise<void>((resolve) => socket.once('data', () => resolve()));
      socket.write(
        `GET /api/v1/realtime?entities=articles HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${admin.token}\r\n\r\n`,
      );
      await opened;
      const bulk = await server.call('POST', '/api/v1/articles/bulk', {
        token: admin.token,
        body: { items: Array.from({ length: 70 }, (_, i) => ({ title: `Batch ${i}`, body: 'b' })) },
      });
      const ids = bulk.body.data.items.map((a: { id: string }) => a.id);
      for (let i = 0; i < 100 && chunks.flatMap((c) => c.events).length < 70; i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      expect(chunks.flatMap((c) => c.events)).toEqual(ids);
      // The 20 events beyond the bucket came in a few writes of several events, not 20 of one...
      const burst = chunks.findIndex((c) => c.events.includes(ids[49]));
      const rest = chunks.slice(burst + 1);
      expect(rest.length).toBeGreaterThanOrEqual(2);
      expect(rest.length).toBeLessThanOrEqual(8);
      // ...and no faster than the rate: 20 events at 50 a second take at least 0.3 s more.
      expect(rest.at(-1)!.at - chunks[burst].at).toBeGreaterThanOrEqual(300);
    } finally {
      await server.close();
    }
  });

  it('keeps a group that fell behind the feed together, reading the log once for its members', async () => {
    const { server, admin, subscribe, close } = await heldServer(20);
    try {
      const streams = [await subscribe(), await subscribe()];
      await expectGrouping(server, { groups: 1, grouped: 2 });
      // More events than the feed keeps in memory (4,096), faster than the group's 20 a second.
      const ids: string[] = [];
      for (let round = 0; round < 9; round++) {
        const bulk = await server.call('POST', '/api/v1/articles/bulk', {
          token: admin.token,
          body: { items: Array.from({ length: 500 }, (_, i) => ({ title: `Far ${round}.${i}`, body: 'b' })) },
        });
        ids.push(...bulk.body.data.items.map((a: { id: string }) => a.id));
      }
      const received = ids[59];
      for (const stream of streams) await stream.next((e) => e.data?.id === received, 10_000);
      // Still one group, though the events it sends now come from the log, not the feed's memory.
      expect(server.realtime.grouping).toEqual({ groups: 1, grouped: 2 });
      expect(server.realtime.leftGroups).toBe(0);
      for (const stream of streams) {
        const got = createdIds(stream);
        expect(got.length).toBeGreaterThanOrEqual(60);
        expect(got).toEqual(ids.slice(0, got.length));
      }
    } finally {
      await close();
    }
  });

  it('writes the events a group sends at once as one chunk to each member', async () => {
    const server = await startTestServer(
      {},
      { overrides: { rateLimit: GENEROUS_LIMITS, realtime: { ...REALTIME, heartbeatMs: 60_000 } } },
    );
    let other: SseStream | undefined;
    try {
      const admin = await server.user({ roles: ['ADMIN'] });
      const url = new URL(server.url);
      // A raw socket, so the chunks of the chunked body can be counted as the server wrote them.
      const received: Buffer[] = [];
      const socket = connect(Number(url.port), url.hostname);
      socket.on('data', (data: Buffer) => received.push(data));
      const opened = new Promise<void>((resolve) => socket.once('data', () => resolve()));
      socket.write(
        `GET /api/v1/realtime?entities=articles HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${admin.token}\r\n\r\n`,
      );
      await opened;
      other = await openSse(`${server.url}/api/v1/realtime?entities=articles`, { token: admin.token });
      await expectGrouping(server, { groups: 1, grouped: 2 });
      const bulk = await server.call('POST', '/api/v1/articles/bulk', {
        token: admin.token,
        body: { items: Array.from({ length: 30 }, (_, i) => ({ title: `Chunk ${i}`, body: 'b' })) },
      });
      const ids = bulk.body.data.items.map((a: { id: string }) => a.id);
      const eventChunks = () => chunkBodies(Buffer.concat(received)).filter((body) => body.includes('data: '));
      for (let i = 0; i < 100 && eventChunks().flatMap(createdIn).length < 30; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
      expect(eventChunks().flatMap(createdIn)).toEqual(ids);
      // One transaction's thirty events, decided together: one chunk, not thirty.
      expect(eventChunks()).toHaveLength(1);
      await other.next((e) => e.event === 'articles.created' && e.data.id === ids.at(-1));
      expect(createdIds(other)).toEqual(ids);
    } finally {
      other?.close();
      await server.close();
    }
  });

  it('holds the streams that see alike to their rate together, as one group that falls behind and catches up', async () => {
    const { server, admin, subscribe, close } = await heldServer(20);
    try {
      const held = await Promise.all([subscribe(), subscribe(), subscribe()]);
      await expectGrouping(server, { groups: 1, grouped: 3 });

      const started = Date.now();
      const bulk = await server.call('POST', '/api/v1/articles/bulk', {
        token: admin.token,
        body: { items: Array.from({ length: 40 }, (_, i) => ({ title: `Held ${i}`, body: 'b' })) },
      });
      const ids: string[] = bulk.body.data.items.map((a: { id: string }) => a.id);
      // The group is behind the feed now: a stream that opens at its head starts a group of its own.
      const late = await subscribe();
      await expectGrouping(server, { groups: 2, grouped: 4 });
      const after = (
        await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title: 'After', body: 'b' } })
      ).body.data.id as string;
      await late.next((e) => e.data?.id === after);
      expect(createdIds(late)).toEqual([after]);

      for (const stream of held) await stream.next((e) => e.data?.id === after, 10_000);
      // Twenty at once, then two every tenth of a second: the rest took a second at least.
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      for (const stream of held) expect(createdIds(stream)).toEqual([...ids, after]);
      // Held to their rate, they never left their group; caught up, it joined the later one.
      expect(server.realtime.grouping).toEqual({ groups: 1, grouped: 4 });
      expect(server.realtime.leftGroups).toBe(0);
      const last = (
        await server.call('POST', '/api/v1/articles', { token: admin.token, body: { title: 'Last', body: 'b' } })
      ).body.data.id as string;
      for (const stream of [...held, late]) await stream.next((e) => e.data?.id === last);
      for (const stream of held) expect(createdIds(stream)).toEqual([...ids, after, last]);
      expect(createdIds(late)).toEqual([after, last]);
    } finally {
      await close();
    }
  });

  it('keeps streams that read in their group through a burst larger than the socket buffer', async () => {
    const server = await startTestServer(
      {},
      { overrides: { rateLimit: GENEROUS_LIMITS, realtime: { ...REALTIME, heartbeatMs: 60_000 } } },
    );
    const streams: SseStream[] = [];
    try {
      const admin = await server.user({ roles: ['ADMIN'] });
      for (let i = 0; i < 2; i++)
        streams.push(await openSse(`${server.url}/api/v1/realtime?entities=articles`, { token: admin.token }));
      await expectGrouping(server, { groups: 1, grouped: 2 });
      // 40 events of about 2 KB in one commit: 80 KB for each stream, five times the 16 KB high-water mark.
      const bulk = await server.call('POST', '/api/v1/articles/bulk', {
        token: admin.token,
        body: { items: Array.from({ length: 40 }, (_, i) => ({ title: `Burst ${i}`, body: 'x'.repeat(2000) })) },
      });
      const ids: string[] = bulk.body.data.items.map((a: { id: string }) => a.id);
      for (const stream of streams) await stream.next((e) => e.data?.id === ids[39]);
      for (const stream of streams) expect(createdIds(stream)).toEqual(ids);
      expect(server.realtime.grouping).toEqual({ groups: 1, grouped: 2 });
      // Neither left its group meanwhile: the corked burst was not taken for a full socket.
      expect(server.realtime.leftGroups).toBe(0);
    } finally {
      for (const stream of streams) stream.close();
      await server.close();
    }
  });

  it('disconnects a client that stops reading, and answers 429 beyond the streams of one instance', async () => {
    const server = await startTestServer(
      {},
      {
        overrides: { rateLimit: GENEROUS_LIMITS, realtime: { ...REALTIME, maxStreams: 2, slowConsumerMs: 300 } },
      },
    );
    try {
      const admin = await server.user({ roles: ['ADMIN'] });
      // A client that sends its request and never reads a byte of the answer.
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      socket.pause();
      socket.write(
        `GET /api/v1/realtime?entities=articles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin.token}\r\n\r\n`,
      );
      for (let i = 0; i < 100 && server.realtime.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(server.realtime.size).toBe(1);
      const other = await server.user();
      const second = await openSse(`${server.url}/api/v1/realtime?entities=comments`, { token: other.token });
      expect(second.status).toBe(200);
      const third = (await openSse(`${server.url}/api/v1/realtime?entities=comments`, { token: admin.token })) as any;
      expect(third.status).toBe(429);
      expect(third.body.error.message).toMatch(/This server has its 2 realtime streams open/);
      second.close();

      // Large values in a field that is not searched, so each write stays cheap for the server.
      const big = 'x'.repeat(200_000);
      for (let i = 0; i < 40 && server.realtime.size > 0; i++) {
        await server.call('POST', '/api/v1/articles/bulk', {
          token: admin.token,
          body: { items: Array.from({ length: 4 }, (_, j) => ({ title: `Big ${i}-${j}`, body: 'b', extra: big })) },
        });
      }
      for (let i = 0; i < 300 && server.realtime.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
      // Its buffer did not grow without end: the stream was closed.
      expect(server.realtime.size).toBe(0);
      socket.destroy();
    } finally {
      await server.close();
    }
  });
});

describe('heartbeats over many streams', () => {
  it('pings every stream and checks every credential again, a slice of streams at a time', async () => {
    // More streams than one slice of a heartbeat holds (250): every slice must be reached.
    const count = 600;
    const server = await startTestServer(
      {},
      {
        overrides: {
          rateLimit: GENEROUS_LIMITS,
          realtime: { ...REALTIME, maxStreams: count + 10, maxStreamsPerUser: count, heartbeatMs: 300 },
        },
      },
    );
    const streams: SseStream[] = [];
    try {
      const user = await server.user({ roles: ['ADMIN'] });
      for (let i = 0; i < count; i += 100)
        streams.push(
          ...(await Promise.all(
            Array.from({ length: 100 }, () =>
              openSse(`${server.url}/api/v1/realtime?entities=articles`, { token: user.token }),
            ),
          )),
        );
      expect(streams.every((stream) => stream.status === 200)).toBe(true);
      for (let i = 0; i < 50 && streams.some((stream) => stream.comments === 0); i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(streams.filter((stream) => stream.comments === 0)).toHaveLength(0);
      // The session ends: every stream's credential is checked again, the last slice's too.
      await server.call('POST', '/api/v1/auth/logout', { token: user.token });
      const ended = await Promise.all(streams.map((stream) => stream.next((e) => e.event === 'stream.error', 5000)));
      expect(ended.filter((event) => event.data.error.code !== 'UNAUTHORIZED')).toHaveLength(0);
    } finally {
      for (const stream of streams) stream.close();
      await server.close();
    }
  });
});
