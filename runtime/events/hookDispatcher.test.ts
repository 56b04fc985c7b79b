import { afterEach, describe, expect, it } from 'vitest';
import { type MemoryContext, memoryContext } from '../../test/support/memoryContext.js';
import { SYSTEM_CALLER } from '../context/caller.js';
import type { AfterCommitArgs, HookTable } from '../context/hookTypes.js';
import { EVENT_CURSORS } from '../model/collections.js';
import type { Doc, Store } from '../store/types.js';
import { appendEvents, lastEventSeq } from '../write/eventLog.js';
import { HookDispatcher } from './hookDispatcher.js';

/** Counts the store's reads of the event log and the events they returned. */
function countingLogReads(store: Store): { store: Store; reads: () => number; events: () => number } {
  let reads = 0;
  let events = 0;
  const counted = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== 'find' || typeof value !== 'function') return value;
      return (collection: string, ...rest: unknown[]) => {
        const found = value.call(target, collection, ...rest);
        if (collection !== 'changeEvents') return found;
        reads++;
        return found.then((rows: unknown[]) => {
          events += rows.length;
          return rows;
        });
      };
    },
  });
  return { store: counted, reads: () => reads, events: () => events };
}

describe('afterCommit delivery', () => {
  let memory: MemoryContext;
  let dispatcher: HookDispatcher | undefined;
  afterEach(async () => {
    await dispatcher?.stop();
    await memory.close();
  });

  const write = async (plural: string, count: number) => {
    const entity = memory.ctx.registry.entities.get(plural)!.model;
    await memory.ctx.store.transaction((tx) =>
      appendEvents(
        tx,
        entity,
        Array.from({ length: count }, (_, i) => ({
          event: 'created' as const,
          id: `${plural}${i}`,
          after: { id: `${plural}${i}` },
        })),
        SYSTEM_CALLER,
        memory.ctx.now(),
      ),
    );
  };

  const start = async (pollMs: number) => {
    const heard: string[] = [];
    const hooks: HookTable = new Map([
      [
        'comments',
        { afterCommit: async ({ id, seq }: AfterCommitArgs<Doc, unknown>) => void heard.push(`${seq}:${id}`) },
      ],
    ]);
    const counting = countingLogReads(memory.ctx.store);
    const ctx = { ...memory.ctx, hooks, store: counting.store };
    dispatcher = new HookDispatcher(ctx, { attempts: 3, backoffMs: 10, timeoutMs: 1000, pollMs });
    await dispatcher.start();
    return { heard, reads: counting.reads, events: counting.events };
  };
  const cursor = async () => (await memory.ctx.store.find(EVENT_CURSORS, {}))[0].position as number;

  it('hands hooked entities their events in order and moves the cursor past the others unread', async () => {
    memory = await memoryContext();
    const { heard, events } = await start(60_000);
    await write('articles', 150);
    await write('comments', 2);
    await write('articles', 3);
    await write('comments', 1);
    await dispatcher!.drain();
    expect(heard).toEqual(['151:comments0', '152:comments1', '156:comments0']);
    expect(events()).toBe(3);
    expect(await cursor()).toBe(await lastEventSeq(memory.ctx.store));
  });

  it('reads the log soon after a hooked write, and leaves other writes to the poll', async () => {
    memory = await memoryContext();
    const { heard, reads } = await start(60_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = reads();
    await write('articles', 5);
    dispatcher!.notify('articles');
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(reads()).toBe(before);
    expect(await cursor()).toBe(0);

    await write('comments', 1);
    dispatcher!.notify('comments');
    await expect.poll(() => heard, { timeout: 2000 }).toEqual(['6:comments0']);
    expect(await cursor()).toBe(6);
  });

  it('after a hooked write, a commit of any entity reads the log (the hooked write may have been inside it)', async () => {
    memory = await memoryContext();
    const { heard } = await start(60_000);
    // A hook's write inside an article's transaction tells before that transaction commits.
    dispatcher!.notify('comments');
    await new Promise((resolve) => setTimeout(resolve, 80));
    await write('comments', 1);
    dispatcher!.notify('articles');
    await expect.poll(() => heard, { timeout: 2000 }).toEqual(['1:comments0']);
  });
});
