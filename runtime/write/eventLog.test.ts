import { afterEach, describe, expect, it } from 'vitest';
import { type MemoryContext, memoryContext } from '../../test/support/memoryContext.js';
import { SYSTEM_CALLER } from '../context/caller.js';
import { CHANGE_EVENTS, SEQUENCES } from '../model/collections.js';
import { appendEvents, lastEventSeq, oldestEventSeq, pruneEvents } from './eventLog.js';

describe('the event log', () => {
  let memory: MemoryContext;
  afterEach(() => memory.close());

  const append = async (count: number, at: string) => {
    const { ctx } = memory;
    const articles = ctx.registry.entities.get('articles')!.model;
    await ctx.store.transaction((tx) =>
      appendEvents(
        tx,
        articles,
        Array.from({ length: count }, (_, i) => ({
          event: 'created' as const,
          id: `a${i}`,
          after: { id: `a${i}`, title: 't' },
        })),
        SYSTEM_CALLER,
        new Date(at),
      ),
    );
  };

  it('numbers a group of concurrent transactions in order without a gap, a failed one giving its numbers back', async () => {
    memory = await memoryContext();
    const { ctx } = memory;
    const articles = ctx.registry.entities.get('articles')!.model;
    await append(2, '2026-01-01T00:00:00Z');
    const created = (id: string) => ({ event: 'created' as const, id, after: { id, title: 't' } });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        ctx.store.transaction(async (tx) => {
          await appendEvents(tx, articles, [created(`g${i}a`), created(`g${i}b`)], SYSTEM_CALLER, new Date());
          if (i === 3) throw new Error('this one fails');
          return i;
        }),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      ...Array(3).fill('fulfilled'),
      'rejected',
      ...Array(4).fill('fulfilled'),
    ]);
    const events = await ctx.store.find(CHANGE_EVENTS, { sort: [{ field: 'seq', direction: 'asc' }], limit: 100 });
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    expect(events.slice(2).map((event) => event.entityId)).toEqual(
      [0, 1, 2, 4, 5, 6, 7].flatMap((i) => [`g${i}a`, `g${i}b`]),
    );
    expect(await lastEventSeq(ctx.store)).toBe(16);
  });

  it('refuses to read the counter inside a transaction that numbered events, which it would show stale', async () => {
    memory = await memoryContext();
    const { ctx } = memory;
    const articles = ctx.registry.entities.get('articles')!.model;
    const counterId = '000000000000000000000001';
    await expect(
      ctx.store.transaction(async (tx) => {
        await appendEvents(
          tx,
          articles,
          [{ event: 'created', id: 'a', after: { id: 'a' } }],
          SYSTEM_CALLER,
          new Date(),
        );
        return tx.get(SEQUENCES, counterId);
      }),
    ).rejects.toThrow(/numbers this transaction's rows/);
    expect(await lastEventSeq(ctx.store)).toBe(0);
  });

  it('prunes by age and by count, never past what consumers have delivered', async () => {
    memory = await memoryContext();
    await append(5, '2026-01-01T00:00:00Z');
    await append(5, '2026-01-05T00:00:00Z');
    expect(await lastEventSeq(memory.ctx.store)).toBe(10);
    // Older than Jan 3, but consumers have only delivered up to 3.
    expect(await pruneEvents(memory.ctx.store, new Date('2026-01-03T00:00:00Z'), 3)).toBe(3);
    expect(await oldestEventSeq(memory.ctx.store)).toBe(4);
    expect(await pruneEvents(memory.ctx.store, new Date('2026-01-03T00:00:00Z'), 10)).toBe(2);
    // The newer five are within the age limit; a count limit of 2 takes three more.
    expect(await pruneEvents(memory.ctx.store, new Date('2026-01-03T00:00:00Z'), 10, 2)).toBe(3);
    expect(await memory.ctx.store.count(CHANGE_EVENTS, {})).toBe(2);
    expect(await oldestEventSeq(memory.ctx.store)).toBe(9);
    // Sequence numbers go on after pruning.
    await append(1, '2026-01-06T00:00:00Z');
    expect(await lastEventSeq(memory.ctx.store)).toBe(11);
  });
});
