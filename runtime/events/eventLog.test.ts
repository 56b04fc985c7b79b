import { afterEach, describe, expect, it } from 'vitest';
import { type MemoryContext, memoryContext } from '../../test/support/memoryContext.js';
import { SYSTEM_CALLER } from '../access/caller.js';
import { CHANGE_EVENTS } from '../model/collections.js';
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
