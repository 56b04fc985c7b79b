import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformanceModel } from '../../test/conformance/storeConformance.js';
import {
  activeContext,
  type Context,
  disableTracing,
  enableTracing,
  inSpan,
  linkTo,
  SyncContextManager,
  startSpan,
} from '../telemetry/tracing.js';
import { newId } from '../write/prepareWrite.js';
import { CountCache, CountCachingStore } from './countCache.js';
import { MeasuredStore } from './measuredStore.js';
import { SqliteStore } from './sqlite/sqliteStore.js';
import { carryTrace, TraceCarrier, TracedStore, traceOf } from './tracedStore.js';
import type { Store } from './types.js';

const exporter = new InMemorySpanExporter();
const manager = new SyncContextManager();

beforeAll(() => {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  // The provider is not registered globally: the helpers are handed its tracer's context manager.
  enableTracing('test', '0', manager, provider);
});
afterAll(() => disableTracing());

const thing = () => ({
  id: newId(),
  ownerId: '0'.repeat(24),
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
  name: 'n',
  kind: 'a',
});

/** The server's stack: traced at the bottom, the count cache and the measurements above. */
async function stack() {
  const opened = SqliteStore.open(':memory:');
  await opened.init(conformanceModel);
  const shared = new MeasuredStore(new CountCachingStore(new TracedStore(opened), new CountCache()), () => undefined);
  return shared;
}

function request(): Context {
  return startSpan('GET /things', {})!.context;
}

const spans = () => exporter.getFinishedSpans();
const spanIdOf = (context: Context) => linkTo(context)![0].context.spanId;

describe('traces carried by the store', () => {
  it('keeps a context for the synchronous run of a function only, and restores it after a throw', async () => {
    const ctx = request();
    expect(manager.active()).not.toBe(ctx);
    const seen = manager.with(ctx, () => manager.active());
    expect(seen).toBe(ctx);
    expect(() =>
      manager.with(ctx, () => {
        throw new Error('x');
      }),
    ).toThrow('x');
    expect(activeContext()).toBeUndefined();
    // What runs after an await finds nothing active: a trace goes on only through what it is handed.
    const later = await manager.with(ctx, async () => {
      await Promise.resolve();
      return activeContext();
    });
    expect(later).toBeUndefined();
  });

  it("makes the database calls of a request's store its children, after awaits and through a transaction", async () => {
    exporter.reset();
    const shared = await stack();
    const server = request();
    const store = new TraceCarrier(shared, server);
    expect(traceOf(store)).toBe(server);
    expect(traceOf(shared)).toBeUndefined();
    await store.insert('things', thing());
    await Promise.resolve();
    await store.find('things', { limit: 5 });
    let inside: Context | undefined;
    await store.transaction(async (tx) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      inside = traceOf(tx);
      await tx.insert('things', thing());
      await tx.count('things', {});
    });
    const finished = spans();
    const parentOf = (name: string) => finished.find((s) => s.name === name)?.parentSpanContext?.spanId;
    const root = spanIdOf(server);
    expect(parentOf('INSERT things')).toBe(root);
    expect(parentOf('SELECT things')).toBe(root);
    const transaction = finished.find((s) => s.name === 'transaction')!;
    expect(transaction.parentSpanContext?.spanId).toBe(root);
    // The transaction's store carries the transaction's span past its awaits; its commit is there too.
    expect(inside).toBeDefined();
    const inTransaction = finished.filter((s) => s.parentSpanContext?.spanId === transaction.spanContext().spanId);
    expect(inTransaction.map((s) => s.name).sort()).toEqual(['COMMIT', 'INSERT things', 'SELECT things']);
    // Every span is in the request's trace.
    expect(new Set(finished.map((s) => s.spanContext().traceId))).toEqual(new Set([transaction.spanContext().traceId]));
  });

  it('makes no span for calls outside a sampled trace, and none for what the count cache answers', async () => {
    const shared = await stack();
    exporter.reset();
    await shared.insert('things', thing());
    await shared.transaction(async (tx) => tx.insert('things', thing()));
    expect(spans()).toEqual([]);
    const store = new TraceCarrier(shared, request());
    await store.count('things', {});
    await store.count('things', {});
    expect(spans().filter((s) => s.name === 'SELECT things')).toHaveLength(1);
  });

  it('puts a shared commit in the trace of its first traced member, whichever member comes first', async () => {
    exporter.reset();
    const shared = await stack();
    const traced = [request(), request()];
    const write = (store: Store) =>
      store.transaction(async (tx) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        await tx.insert('things', thing());
      });
    // Started in one tick, the three share a group; the first is outside any trace.
    await Promise.all([write(shared), ...traced.map((trace) => write(new TraceCarrier(shared, trace)))]);
    const commits = spans().filter((s) => s.name === 'COMMIT');
    expect(commits).toHaveLength(1);
    const [commit] = commits;
    expect(commit.attributes['entigen.group_commit.transactions']).toBe(3);
    const transactions = spans().filter((s) => s.name === 'transaction');
    const leading = transactions.find((s) => s.spanContext().traceId === commit.spanContext().traceId)!;
    expect(commit.parentSpanContext?.spanId).toBe(leading.spanContext().spanId);
    expect(leading.parentSpanContext?.spanId).toBe(spanIdOf(traced[0]));
    // The other traced member is linked; the untraced one has nothing to link to.
    const other = transactions.find((s) => s !== leading)!;
    expect(commit.links.map((link) => link.context.spanId)).toEqual([other.spanContext().spanId]);
  });

  it('puts the calls of a nested span beneath it when its store carries it', async () => {
    exporter.reset();
    const shared = await stack();
    const store = new TraceCarrier(shared, request());
    await inSpan('access view things', { parent: traceOf(store) }, async (_span, context) => {
      await Promise.resolve();
      await carryTrace(store, context).find('things', { limit: 1 });
    });
    const access = spans().find((s) => s.name === 'access view things')!;
    const select = spans().find((s) => s.name === 'SELECT things')!;
    expect(select.parentSpanContext?.spanId).toBe(access.spanContext().spanId);
  });
});
