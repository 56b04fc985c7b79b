import { afterEach, describe, expect, it } from 'vitest';
import { memoryContext } from '../../test/support/memoryContext.js';
import { EVENT_CURSORS } from '../model/collections.js';
import { LeaseLost, RowLease } from './rowLease.js';

const ROW = '0000000000000000000000aa';
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function twoHolders() {
  const { ctx, setNow, close: closeContext } = await memoryContext('2026-01-01T00:00:00.000Z');
  close = closeContext;
  await ctx.store.insert(EVENT_CURSORS, { id: ROW, name: 'test', position: 0, leaseOwner: null, leaseUntil: null });
  const clock = () => ctx.now();
  return {
    store: ctx.store,
    setNow,
    a: new RowLease(ctx.store, EVENT_CURSORS, 'holder-a', 1000, clock),
    b: new RowLease(ctx.store, EVENT_CURSORS, 'holder-b', 1000, clock),
  };
}

describe('RowLease', () => {
  it('lets one holder at a time take a row, and another once the lease ran out', async () => {
    const { a, b, setNow } = await twoHolders();
    expect(await a.take(ROW)).not.toBeNull();
    expect(await b.take(ROW)).toBeNull();
    setNow('2026-01-01T00:00:01.500Z');
    expect(await b.take(ROW)).toMatchObject({ leaseOwner: 'holder-b' });
  });

  it('fences a holder whose lease was lost: its writes and its actions are refused', async () => {
    const { a, b, setNow, store } = await twoHolders();
    await a.take(ROW);
    setNow('2026-01-01T00:00:01.500Z');
    // Run out, not yet taken: still refused, since another could take it at any moment.
    expect(await a.save(ROW, { position: 5 })).toBe(false);
    await b.take(ROW);
    expect(await a.save(ROW, { position: 7 })).toBe(false);
    let ran = false;
    await expect(
      a.during(ROW, async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(LeaseLost);
    expect(ran).toBe(false);
    await expect(store.transaction((tx) => a.saveOrThrow(ROW, { position: 9 }, tx))).rejects.toBeInstanceOf(LeaseLost);
    expect((await store.get(EVENT_CURSORS, ROW))?.position).toBe(0);
    expect(await b.save(ROW, { position: 3 })).toBe(true);
  });

  it('keeps the lease while an action runs, and lets every held row go at once', async () => {
    const { a, b, store } = await twoHolders();
    await a.take(ROW);
    // The real clock is not moved here: renewals every third of the lease keep it during a longer action.
    const live = new RowLease(store, EVENT_CURSORS, 'holder-live', 60, () => new Date());
    expect(await b.take(ROW)).toBeNull();
    await a.releaseAll();
    expect(await b.take(ROW)).not.toBeNull();
    await b.releaseAll();
    expect(await live.take(ROW)).not.toBeNull();
    const other = new RowLease(store, EVENT_CURSORS, 'holder-other', 60, () => new Date());
    const result = await live.during(ROW, async () => {
      await new Promise((r) => setTimeout(r, 200));
      return (await other.take(ROW)) === null;
    });
    expect(result).toBe(true);
    await live.releaseAll();
    expect(await other.take(ROW)).not.toBeNull();
  });
});
