import { describe, expect, it } from 'vitest';
import { conformanceModel, filterCases } from '../../../test/conformance/storeConformance.js';
import { tableLayout } from '../common/tableLayout.js';
import { pgDialect } from '../postgres/pgDialect.js';
import { sqliteDialect } from '../sqlite/sqliteDialect.js';
import type { Where } from '../types.js';
import { aggregateStatement } from './aggregateStatement.js';
import type { SqlDialect } from './dialect.js';
import {
  countStatement,
  deleteStatement,
  getStatement,
  incrementStatement,
  insertStatement,
  type Statement,
  selectStatement,
  updateStatement,
} from './statements.js';

const layout = tableLayout(conformanceModel.entities.find((e) => e.plural === 'things')!);
const owned: Where = { field: 'kind', op: 'eq', value: 'a' };
const id = '0190f5a0-0000-7000-8000-000000000001';

/** One of each statement, as each dialect writes it. */
function statements(dialect: SqlDialect): Record<string, Statement | undefined> {
  return {
    page: selectStatement(
      layout,
      {
        where: owned,
        text: 'café au',
        sort: [{ field: 'name', direction: 'asc' }],
        after: id,
        limit: 10,
        skip: 20,
        select: ['name', 'nope'],
      },
      dialect,
    ),
    collated: selectStatement(
      layout,
      { sort: [{ field: 'name', direction: 'desc' }], collation: { locale: 'en', strength: 1 } },
      dialect,
    ),
    count: countStatement(layout, { where: { field: 'flag', op: 'eq', value: true } }, dialect),
    get: getStatement(layout, id, owned, dialect),
    insert: insertStatement(
      layout,
      new Map<string, unknown>([
        ['id', id],
        ['name', 'x'],
        ['_sk_name', 'x'],
      ]),
      dialect,
    ),
    update: updateStatement(
      layout,
      id,
      new Map<string, unknown>([
        ['id', id],
        ['n', 3],
      ]),
      owned,
      dialect,
    ),
    increment: incrementStatement(
      layout,
      id,
      { n: 2 },
      new Map([['updatedAt', '2026-01-01T00:00:00.000Z']]),
      undefined,
      dialect,
    ),
    delete: deleteStatement(layout, id, owned, dialect),
    aggregate: aggregateStatement(
      layout,
      {
        where: owned,
        text: 'café',
        groupBy: [{ field: 'kind' }, { field: 'when', bucket: 'week' }],
        timeZone: 'Europe/Berlin',
        measures: [
          { op: 'sum', field: 'n' },
          { op: 'avg', field: 'x' },
          { op: 'max', field: 'when' },
        ],
        sort: [{ column: 'sum.n', direction: 'desc' }],
        limit: 10,
        skip: 5,
      },
      dialect,
    ),
  };
}

describe('SQL statements', () => {
  it('SQLite', () => {
    expect(statements(sqliteDialect)).toMatchSnapshot();
  });

  it('PostgreSQL', () => {
    expect(statements(pgDialect)).toMatchSnapshot();
  });

  it('set nothing when only the id would change', () => {
    expect(updateStatement(layout, id, new Map([['id', id]]), undefined, sqliteDialect)).toBeUndefined();
  });

  it.each([sqliteDialect, pgDialect])(
    'never put a value in the SQL text, and bind one per placeholder (%#)',
    (dialect) => {
      const secret = "x'); DROP TABLE things; --";
      const wheres: Where[] = [
        ...filterCases.map(([where]) => where),
        { field: 'name', op: 'eq', value: secret },
        { field: 'name', op: 'in', value: [secret] },
      ];
      for (const where of wheres) {
        for (const { sql, params } of [
          selectStatement(layout, { where, text: secret }, dialect),
          countStatement(layout, { where }, dialect),
          getStatement(layout, secret, where, dialect),
          deleteStatement(layout, secret, where, dialect),
          aggregateStatement(
            layout,
            {
              where,
              text: secret,
              groupBy: [{ field: 'when', bucket: 'month' }],
              timeZone: secret,
              measures: [{ op: 'sum', field: 'n' }],
              sort: [{ column: 'count', direction: 'desc' }],
              limit: 1,
              skip: 0,
            },
            dialect,
          ),
        ]) {
          expect(sql).not.toContain('DROP');
          const placeholders =
            dialect === sqliteDialect ? (sql.match(/\?/g) ?? []).length : new Set(sql.match(/\$\d+/g) ?? []).size;
          expect(placeholders).toBe(params.length);
        }
      }
    },
  );
});
