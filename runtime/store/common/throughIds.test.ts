import { describe, expect, it } from 'vitest';
import { MAX_THROUGH_IDS, QueryTooLarge, type Where } from '../types.js';
import type { TableLayout } from './tableLayout.js';
import { hasThrough, settleThroughByIds, throughCollections, withKnownIds } from './throughIds.js';

const layout = (table: string, columns: Record<string, 'text' | 'json'>): TableLayout =>
  ({
    table,
    columns: new Map(Object.entries(columns).map(([field, kind]) => [field, { field, kind }])),
    searchFields: [],
    unique: [],
    indexes: [],
  }) as unknown as TableLayout;

const tickets = layout('tickets', { id: 'text', assignee: 'text' });
const comments = layout('comments', { id: 'text', ticket: 'text', tickets: 'json' });
const siblings = new Map([
  ['tickets', tickets],
  ['comments', comments],
]);
tickets.siblings = siblings;
comments.siblings = siblings;

const mine: Where = { field: 'assignee', op: 'eq', value: 'u1' };

describe('conditions through a reference, for a store that cannot join', () => {
  it('become the ids the inner condition selects: in for a reference, contains for an array of them', async () => {
    const asked: unknown[] = [];
    const ids = async (collection: string, where: Where | undefined) => {
      asked.push([collection, where]);
      return ['t1', 't2'];
    };
    expect(
      await settleThroughByIds(
        {
          and: [
            { through: { field: 'ticket', collection: 'tickets', where: mine } },
            { field: 'id', op: 'ne', value: 'x' },
          ],
        },
        comments,
        ids,
      ),
    ).toEqual({
      and: [
        { field: 'ticket', op: 'in', value: ['t1', 't2'] },
        { field: 'id', op: 'ne', value: 'x' },
      ],
    });
    expect(await settleThroughByIds({ through: { field: 'tickets', collection: 'tickets' } }, comments, ids)).toEqual({
      field: 'tickets',
      op: 'contains',
      value: ['t1', 't2'],
    });
    expect(asked).toEqual([
      ['tickets', mine],
      ['tickets', undefined],
    ]);
  });

  it('match nothing while pending, and refuse more ids than they fetch', async () => {
    const none = async () => [];
    expect(
      await settleThroughByIds(
        { through: { field: 'ticket', collection: 'tickets', viewScopePending: true } },
        comments,
        none,
      ),
    ).toEqual({ or: [] });
    const many = async (_c: string, _w: Where | undefined, limit: number) =>
      Array.from({ length: limit }, (_, i) => `t${i}`);
    await expect(
      settleThroughByIds({ through: { field: 'ticket', collection: 'tickets' } }, comments, many),
    ).rejects.toBeInstanceOf(QueryTooLarge);
    expect(MAX_THROUGH_IDS).toBe(50_000);
  });

  it('take known ids bottom up, and keep the condition where none are known', async () => {
    const chain: Where = {
      through: {
        field: 'ticket',
        collection: 'tickets',
        where: { through: { field: 'project', collection: 'projects' } },
      },
    };
    expect(hasThrough(chain)).toBe(true);
    expect([...throughCollections(chain)]).toEqual(['tickets', 'projects']);
    const seen: string[] = [];
    const settled = await withKnownIds(chain, async (through) => {
      seen.push(through.collection);
      return through.collection === 'projects' ? ['p1'] : undefined;
    });
    expect(seen).toEqual(['projects', 'tickets']);
    expect(settled).toEqual({
      through: {
        field: 'ticket',
        collection: 'tickets',
        where: { through: { field: 'project', collection: 'projects', ids: ['p1'] } },
      },
    });
  });
});
