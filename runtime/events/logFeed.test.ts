import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type MemoryContext, memoryContext } from '../../test/support/memoryContext.js';
import { SYSTEM_CALLER } from '../access/caller.js';
import { appendEvents } from './eventLog.js';
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
});
