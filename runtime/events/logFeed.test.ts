import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type MemoryContext, memoryContext } from '../../test/support/memoryContext.js';
import { SYSTEM_CALLER } from '../context/caller.js';
import { appendEvents } from '../write/eventLog.js';
import { LogFeed } from './logFeed.js';

describe('the log feed', () => {
  let memory: MemoryContext;
  let feed: LogFeed | undefined;
  afterEach(async () => {
    feed?.stop();
    await memory.close();
  });

  it('reads new events once for its listeners and serves any position, in order, within its memory bound', async () => {
    memory = await memoryContext();
    const { ctx } = memory;
    feed = new LogFeed({ store: ctx.store, logger: pino({ level: 'silent' }), pollMs: 60_000 });
    await feed.start();
    let woken = 0;
    feed.listen(() => woken++);
    const articles = ctx.registry.entities.get('articles')!.model;
    // Twenty records of 1 MB each: more than the feed keeps in memory.
    const big = 'x'.repeat(1_000_000);
    for (let i = 0; i < 20; i++)
      await ctx.store.transaction((tx) =>
        appendEvents(
          tx,
          articles,
          [{ event: 'created', id: `a${i}`, after: { id: `a${i}`, body: big } }],
          SYSTEM_CALLER,
          ctx.now(),
        ),
      );
    feed.notify();
    for (let i = 0; i < 100 && feed.head < 20; i++) await new Promise((r) => setTimeout(r, 10));
    expect(feed.head).toBe(20);
    expect(woken).toBeGreaterThan(0);
    // From the start (beyond the memory: read from the store) and near the head (from memory).
    expect((await feed.after(0, 50)).map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect((await feed.after(17, 50)).map((e) => e.seq)).toEqual([18, 19, 20]);
    expect(await feed.after(20, 50)).toEqual([]);
  });

  it('lets listeners behind its memory at nearby positions share reads of the log', async () => {
    memory = await memoryContext();
    const { ctx } = memory;
    const articles = ctx.registry.entities.get('articles')!.model;
    feed = new LogFeed({ store: ctx.store, logger: pino({ level: 'silent' }), pollMs: 60_000 });
    await feed.start();
    feed.listen(() => {});
    // More events than the feed keeps: the first two hundred or so end up behind its memory.
    const total = 4300;
    await ctx.store.transaction((tx) =>
      appendEvents(
        tx,
        articles,
        Array.from({ length: total }, (_, i) => ({ event: 'created' as const, id: `a${i}`, after: { id: `a${i}` } })),
        SYSTEM_CALLER,
        ctx.now(),
      ),
    );
    feed.notify();
    for (let i = 0; i < 300 && feed.head < total; i++) await new Promise((r) => setTimeout(r, 10));
    expect(feed.head).toBe(total);
    expect(feed.inMemoryAfter(0)).toBeUndefined();
    const seqs = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
    // Ten streams that fell behind together ask at once: one read answers them all.
    const pages = await Promise.all(Array.from({ length: 10 }, (_, i) => feed!.after(i * 3, 20)));
    expect(pages.map((page) => page.map((e) => e.seq))).toEqual(
      Array.from({ length: 10 }, (_, i) => seqs(i * 3 + 1, 20)),
    );
    expect(feed.catchUpReads).toBe(1);
    // Later pages inside what was read come from it; a page reaching past it is cut at its end.
    expect((await feed.after(40, 50)).map((e) => e.seq)).toEqual(seqs(41, 50));
    expect((await feed.after(90, 50)).map((e) => e.seq)).toEqual(seqs(91, 10));
    expect(feed.catchUpReads).toBe(1);
    // Past it, the next read; near the head, memory.
    expect((await feed.after(100, 50)).map((e) => e.seq)).toEqual(seqs(101, 50));
    expect(feed.catchUpReads).toBe(2);
    expect((await feed.after(total - 2, 50)).map((e) => e.seq)).toEqual([total - 1, total]);
    expect(feed.catchUpReads).toBe(2);
  });

  it('only moves its head while no listener wants the events, and reads them again once one does', async () => {
    memory = await memoryContext();
    const { ctx } = memory;
    const articles = ctx.registry.entities.get('articles')!.model;
    const published: number[] = [];
    feed = new LogFeed({
      store: ctx.store,
      logger: pino({ level: 'silent' }),
      pollMs: 60_000,
      publish: (seq) => published.push(seq),
    });
    await feed.start();
    let wanted = true;
    let woken = 0;
    feed.listen(
      () => woken++,
      () => wanted,
    );
    const commit = (id: string) =>
      ctx.store.transaction((tx) =>
        appendEvents(tx, articles, [{ event: 'created', id, after: { id } }], SYSTEM_CALLER, ctx.now()),
      );
    const settled = async (head: number) => {
      for (let i = 0; i < 100 && feed!.head < head; i++) await new Promise((r) => setTimeout(r, 10));
    };
    await commit('a0');
    feed.notify();
    await settled(1);
    expect(feed.inMemoryAfter(0)?.map((e) => e.seq)).toEqual([1]);
    wanted = false;
    for (let i = 1; i < 4; i++) await commit(`a${i}`);
    feed.notify();
    await settled(4);
    // The head moved, other instances heard of it and the listener was woken; no event was kept,
    // not even the one read before.
    expect(feed.head).toBe(4);
    expect(published).toEqual([1, 4]);
    expect(woken).toBe(2);
    expect(feed.inMemoryAfter(0)).toBeUndefined();
    expect(feed.inMemoryAfter(3)).toBeUndefined();
    // What a listener missed meanwhile is read from the log.
    expect((await feed.after(1, 50)).map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(feed.catchUpReads).toBe(1);
    wanted = true;
    await commit('a4');
    feed.notify();
    await settled(5);
    expect(feed.inMemoryAfter(4)?.map((e) => e.seq)).toEqual([5]);
    expect(published).toEqual([1, 4, 5]);
  });
});
