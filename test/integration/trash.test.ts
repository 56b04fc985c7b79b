import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileJobId } from '../../runtime/jobs/fileSchedules.js';
import { CHANGE_EVENTS } from '../../runtime/model/collections.js';
import { exportRecords } from '../../runtime/transfer/exportRecords.js';
import { openSse } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('trash: deleted notes wait in a trash, come back, or go for good', () => {
  let server: TestServer;
  let admin: { id: string; token: string };
  let alice: { id: string; token: string };
  let bob: { id: string; token: string };
  /** The server's clock, moved forward by tests that wait out the retention. */
  let shift = 0;
  const as = (who: { token: string }) => ({
    call: (method: string, path: string, body?: unknown) => server.call(method, path, { token: who.token, body }),
  });
  const note = async (who: { token: string }, body: Record<string, unknown>) => {
    const res = await as(who).call('POST', '/api/v1/notes', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; [key: string]: unknown };
  };
  const ids = (res: { body: { data: { items: { id: string }[] } } }) => res.body.data.items.map((n) => n.id).sort();

  beforeAll(async () => {
    server = await startTestServer({}, { now: () => new Date(Date.now() + shift) });
    admin = await server.user({ roles: ['ADMIN'] });
    alice = await server.user();
    bob = await server.user();
  });
  afterAll(() => server.close());

  it('moves a deleted note to the trash: gone from reads and writes, listed with trash=only, logged as trashed', async () => {
    const kept = await note(alice, { title: 'Kept' });
    const binned = await note(alice, { title: 'Binned' });
    const removed = await as(alice).call('DELETE', `/api/v1/notes/${binned.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ id: binned.id, deleted: true, trashed: true });

    expect((await as(alice).call('GET', `/api/v1/notes/${binned.id}`)).status).toBe(404);
    expect((await as(alice).call('PATCH', `/api/v1/notes/${binned.id}`, { title: 'x' })).status).toBe(404);
    expect((await as(alice).call('DELETE', `/api/v1/notes/${binned.id}`)).status).toBe(404);
    expect(ids(await as(alice).call('GET', '/api/v1/notes'))).toEqual([kept.id]);
    expect((await as(alice).call('GET', '/api/v1/notes?q=Binned')).body.data.totalCount).toBe(0);

    const trash = await as(alice).call('GET', '/api/v1/notes?trash=only');
    expect(ids(trash)).toEqual([binned.id]);
    expect(trash.body.data.items[0].trashedAt).toEqual(expect.any(String));
    expect(ids(await as(alice).call('GET', '/api/v1/notes?trash=include'))).toEqual([kept.id, binned.id].sort());

    // Its history stays readable, as a deleted record's does.
    const versions = await as(admin).call('GET', `/api/v1/notes/${binned.id}/versions`);
    expect(versions.body.items.map((v: { changeType: string }) => v.changeType)).toEqual(['trash', 'create']);
    const events = await server.ctx.store.find(CHANGE_EVENTS, {
      where: { field: 'entityId', op: 'eq', value: binned.id },
      sort: [{ field: 'seq', direction: 'asc' }],
    });
    expect(events.map((e) => e.event)).toEqual(['created', 'trashed']);
  });

  it('shows each caller only the trashed records it may delete; the trash needs the delete permission', async () => {
    const mine = await note(alice, { title: 'Alice binned' });
    const theirs = await note(bob, { title: 'Bob binned' });
    await as(alice).call('DELETE', `/api/v1/notes/${mine.id}`);
    await as(bob).call('DELETE', `/api/v1/notes/${theirs.id}`);
    const aliceTrash = ids(await as(alice).call('GET', '/api/v1/notes?trash=only'));
    expect(aliceTrash).toContain(mine.id);
    expect(aliceTrash).not.toContain(theirs.id);
    expect(ids(await as(admin).call('GET', '/api/v1/notes?trash=only'))).toEqual(
      expect.arrayContaining([mine.id, theirs.id]),
    );
    const anonymous = await server.call('GET', '/api/v1/notes?trash=only');
    expect(anonymous.status).toBe(401);
    // Another user cannot take it out of someone else's trash either: to them it does not exist.
    expect((await as(bob).call('POST', `/api/v1/notes/${mine.id}/restore-from-trash`)).status).toBe(404);
  });

  it('restores a note from the trash as it was, and refuses one that is not there', async () => {
    const back = await note(alice, { title: 'Back', pinned: true });
    await as(alice).call('DELETE', `/api/v1/notes/${back.id}`);
    const restored = await as(alice).call('POST', `/api/v1/notes/${back.id}/restore-from-trash`);
    expect(restored.status).toBe(200);
    expect(restored.body.data).toMatchObject({ id: back.id, title: 'Back', pinned: true, trashedAt: null });
    expect((await as(alice).call('GET', `/api/v1/notes/${back.id}`)).status).toBe(200);
    expect(ids(await as(alice).call('GET', '/api/v1/notes?trash=only'))).not.toContain(back.id);
    const again = await as(alice).call('POST', `/api/v1/notes/${back.id}/restore-from-trash`);
    expect(again.status).toBe(404);
    expect(again.body.error.message).toMatch(/not in the trash/);

    const versions = await as(admin).call('GET', `/api/v1/notes/${back.id}/versions`);
    expect(versions.body.items.map((v: { changeType: string }) => v.changeType)).toEqual([
      'untrash',
      'trash',
      'create',
    ]);
  });

  it('deletes for good only with the purge permission, from the trash or not', async () => {
    const doomed = await note(alice, { title: 'Doomed' });
    const refused = await server.call('DELETE', `/api/v1/notes/${doomed.id}?permanent=true`, { token: alice.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/purge/);
    const gone = await server.call('DELETE', `/api/v1/notes/${doomed.id}?permanent=true`, { token: admin.token });
    expect(gone.status).toBe(200);
    expect(gone.body.data).toEqual({ id: doomed.id, deleted: true });
    expect(ids(await as(admin).call('GET', '/api/v1/notes?trash=include'))).not.toContain(doomed.id);

    const trashedFirst = await note(alice, { title: 'Trashed first' });
    await as(alice).call('DELETE', `/api/v1/notes/${trashedFirst.id}`);
    expect(
      (await server.call('DELETE', `/api/v1/notes/${trashedFirst.id}?permanent=true`, { token: admin.token })).status,
    ).toBe(200);
    expect(ids(await as(admin).call('GET', '/api/v1/notes?trash=only'))).not.toContain(trashedFirst.id);
    const events = await server.ctx.store.find(CHANGE_EVENTS, {
      where: { field: 'entityId', op: 'eq', value: trashedFirst.id },
      sort: [{ field: 'seq', direction: 'asc' }],
    });
    expect(events.map((e) => e.event)).toEqual(['created', 'trashed', 'deleted']);
  });

  it('keeps a trashed note holding its unique values, and references to it until it is purged', async () => {
    const first = await note(alice, { title: 'First', code: 'N-1' });
    const next = await note(alice, { title: 'Next', follows: first.id });
    await as(alice).call('DELETE', `/api/v1/notes/${first.id}`);
    const clash = await as(alice).call('POST', '/api/v1/notes', { title: 'Clash', code: 'N-1' });
    expect(clash.status).toBe(409);
    // The reference stays while the note is in the trash (setNull applies at purge).
    expect((await as(alice).call('GET', `/api/v1/notes/${next.id}`)).body.data.follows).toBe(first.id);
    // A new reference to a trashed note is refused: to requests it does not exist.
    const dangling = await as(alice).call('POST', '/api/v1/notes', { title: 'Dangling', follows: first.id });
    expect(dangling.status).toBe(422);

    // Within the retention the purge job leaves it; past it, the job deletes it for good.
    const job = fileJobId('trash-purge');
    expect((await as(admin).call('POST', `/api/v1/scheduledJobs/${job}/run`)).status).toBe(202);
    await server.scheduler.idle();
    expect(ids(await as(alice).call('GET', '/api/v1/notes?trash=only'))).toContain(first.id);

    shift = 31 * DAY_MS;
    try {
      // A session of that later day (today's would have expired by then).
      const later = await server.user({ roles: ['ADMIN'] });
      expect((await as(later).call('POST', `/api/v1/scheduledJobs/${job}/run`)).status).toBe(202);
      await server.scheduler.idle();
    } finally {
      shift = 0;
    }
    const runs = (await as(admin).call('GET', `/api/v1/jobExecutions?jobId=${job}`)).body.data.items;
    const outcomes = runs.map((r: { status: string; output: string }) => [r.status, JSON.parse(r.output)]);
    // Newest first: the later run purged every note trashed by this file's tests, the first none.
    expect(outcomes).toEqual([
      ['completed', { purged: expect.any(Number), kept: 0, keptFirst: [] }],
      ['completed', { purged: 0, kept: 0, keptFirst: [] }],
    ]);
    expect(outcomes[0][1].purged).toBeGreaterThanOrEqual(3);
    expect(ids(await as(admin).call('GET', '/api/v1/notes?trash=only'))).not.toContain(first.id);
    expect((await as(alice).call('GET', `/api/v1/notes/${next.id}`)).body.data.follows).toBeNull();
    expect((await as(alice).call('POST', '/api/v1/notes', { title: 'Reused', code: 'N-1' })).status).toBe(201);
  });

  it('tells realtime subscribers a note left for the trash, and that it came back', async () => {
    const stream = await openSse(`${server.url}/api/v1/realtime?entities=notes`, { token: alice.token });
    try {
      const watched = await note(alice, { title: 'Watched' });
      await stream.next((e) => e.event === 'notes.created' && e.data.id === watched.id);
      await as(alice).call('DELETE', `/api/v1/notes/${watched.id}`);
      const trashed = await stream.next((e) => e.event === 'notes.trashed');
      expect(trashed.data).toEqual({ id: watched.id });
      await as(alice).call('POST', `/api/v1/notes/${watched.id}/restore-from-trash`);
      const back = await stream.next((e) => e.event === 'notes.untrashed');
      expect(back.data).toMatchObject({ id: watched.id, title: 'Watched', trashedAt: null });
    } finally {
      stream.close();
    }
  });

  it('leaves the trash out of exports: the store stack every path and the CLI open hides it', async () => {
    const exported = await note(alice, { title: 'Exported' });
    const binned = await note(alice, { title: 'Not exported' });
    await as(alice).call('DELETE', `/api/v1/notes/${binned.id}`);
    let text = '';
    for await (const chunk of exportRecords(server.ctx, server.ctx.registry.entities.get('notes')!.model, 'jsonl'))
      text += chunk;
    expect(text).toContain(exported.id);
    expect(text).not.toContain(binned.id);
  });

  it('refuses malformed trash and permanent parameters, and trash on entities without one', async () => {
    const bad = await as(admin).call('GET', '/api/v1/notes?trash=all');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.trash).toBe('must be only or include');
    const none = await as(admin).call('GET', '/api/v1/products?trash=only');
    expect(none.status).toBe(400);
    expect(none.body.error.details.trash).toMatch(/keep no trash/);
    const subject = await note(alice, { title: 'Subject' });
    const maybe = await server.call('DELETE', `/api/v1/notes/${subject.id}?permanent=maybe`, { token: admin.token });
    expect(maybe.status).toBe(400);
    expect(maybe.body.error.details.permanent).toBe('must be true or false');
    expect((await as(alice).call('GET', `/api/v1/notes/${subject.id}`)).status).toBe(200);
  });
});
