import { randomUUID } from 'node:crypto';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { tableLayout } from '../../runtime/store/common/tableLayout.js';
import { changesChannel } from '../../runtime/store/postgres/changeNotices.js';
import { pgDialect } from '../../runtime/store/postgres/pgDialect.js';
import { PgStore } from '../../runtime/store/postgres/pgStore.js';
import { CommitGroup } from '../../runtime/store/postgres/pgTransaction.js';
import { countStatement, selectStatement } from '../../runtime/store/sql/statements.js';
import { type FindQuery, StoreUnavailable, UniqueConflict, type Where } from '../../runtime/store/types.js';
import { disableTracing, enableTracing, SyncContextManager, startSpan } from '../../runtime/telemetry/tracing.js';
import { newId } from '../../runtime/write/prepareWrite.js';
import { startTestServer } from '../support/testServer.js';
import { conformanceModel, storeConformance } from './storeConformance.js';

// Runs under `npm run test:postgres` (CI runs it); it needs a PostgreSQL server at POSTGRES_URL.
const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// Each run gets its own schema, so runs never see each other's tables.
storeConformance('postgres', async () =>
  PgStore.open(POSTGRES_URL, { schema: `conformance_${randomUUID().replace(/-/g, '')}` }),
);

/** Runs `fn` on a store over a schema of its own holding the conformance model; closes it after. */
async function withFreshStore(fn: (store: PgStore) => Promise<void>): Promise<void> {
  const store = PgStore.open(POSTGRES_URL, { schema: `conformance_${randomUUID().replace(/-/g, '')}` });
  try {
    await store.init(conformanceModel);
    await fn(store);
  } finally {
    await store.close();
  }
}

describe('postgres indexes over long text', () => {
  it('rebuilds a unique index an older version made over the whole value, then keeps a 900 kB value unique', async () => {
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(`CREATE TABLE ${schema}.things ("id" TEXT PRIMARY KEY, "code" TEXT COLLATE "C")`);
      await client.query(`CREATE UNIQUE INDEX ux_things_code ON ${schema}.things ("code")`);
      const store = PgStore.open(POSTGRES_URL, { schema });
      try {
        await store.init(conformanceModel);
        const { rows } = await client.query(
          `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'ux_things_code'`,
          [schema],
        );
        expect(rows[0].indexdef).toContain('md5(');
        const long = 'x'.repeat(900_000);
        const doc = () => ({
          id: newId(),
          ownerId: '0'.repeat(24),
          name: 'n',
          code: long,
          createdAt: '2024-01-01T00:00:00.000Z',
          updatedAt: '2024-01-01T00:00:00.000Z',
        });
        await store.insert('things', doc());
        await expect(store.insert('things', doc())).rejects.toBeInstanceOf(UniqueConflict);
        expect(await store.count('things', { where: { field: 'code', op: 'eq', value: long } })).toBe(1);
      } finally {
        await store.close();
      }
    } finally {
      await client.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await client.end();
    }
  });
});

describe('postgres transactions', () => {
  it('runs a transaction again when it loses a deadlock, so both callers succeed', async () => {
    await withFreshStore(async (store) => {
      const doc = (name: string) => ({
        id: newId(),
        ownerId: '0'.repeat(24),
        name,
        n: 0,
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
      });
      const [a, b] = [await store.insert('things', doc('a')), await store.insert('things', doc('b'))];
      let attempts = 0;
      const crossing = (first: string, second: string) =>
        store.transaction(async (tx) => {
          attempts++;
          await tx.increment('things', first, { n: 1 });
          await new Promise((resolve) => setTimeout(resolve, 300));
          await tx.increment('things', second, { n: 1 });
        });
      await Promise.all([crossing(a.id, b.id), crossing(b.id, a.id)]);
      expect(attempts).toBe(3);
      expect((await store.get('things', a.id))!.n).toBe(2);
      expect((await store.get('things', b.id))!.n).toBe(2);
    });
  });

  it('queues overlapping queries inside a transaction on its one connection (pg deprecates running them at once)', async () => {
    const store = PgStore.open(POSTGRES_URL, { schema: `conformance_${randomUUID().replace(/-/g, '')}` });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      await store.init(conformanceModel);
      const doc = (name: string) => ({
        id: newId(),
        ownerId: '0'.repeat(24),
        name,
        n: 0,
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
      });
      const ids = await store.transaction(async (tx) => {
        const inserted = await Promise.all(Array.from({ length: 20 }, (_, i) => tx.insert('things', doc(`t${i}`))));
        await Promise.all(inserted.map((d) => tx.increment('things', d.id, { n: 2 })));
        return inserted.map((d) => d.id);
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.includes('already executing a query'))).toEqual([]);
      const stored = await store.find('things', { where: { op: 'in', field: 'id', value: ids } });
      expect(stored.map((d) => d.n)).toEqual(ids.map(() => 2));
    } finally {
      process.off('warning', onWarning);
      await store.close();
    }
  });
});

describe('postgres commits', () => {
  const thing = (fields: Record<string, unknown>) => ({
    id: newId(),
    ownerId: '0'.repeat(24),
    name: 'n',
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    ...fields,
  });

  it('numbers rows as their transactions commit, so a transaction still open holds no writer up', async () => {
    await withFreshStore(async (store) => {
      const counterRow = await store.insert('things', thing({ name: 'counter', n: 0 }));
      const counter = { collection: 'things', id: counterRow.id, field: 'n', into: 'n' };
      await store.numberOnCommit(counter.collection, counter);
      await store.numberOnCommit(counter.collection, counter); // a second instance starting
      const order: string[] = [];
      const slow = store.transaction(async (tx) => {
        expect(await tx.insertNumbered?.('things', [thing({ name: 'slow' })], counter)).toBe(true);
        await tx.count('things', {}); // the insert has gone out: the row exists, unnumbered
        await new Promise((resolve) => setTimeout(resolve, 300));
        order.push('slow');
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await store.transaction(async (tx) => {
        await tx.insertNumbered?.('things', [thing({ name: 'quick 1' }), thing({ name: 'quick 2' })], counter);
      });
      order.push('quick');
      await slow;
      expect(order).toEqual(['quick', 'slow']);
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.transaction(async (tx) => {
            expect(await tx.insertNumbered?.('things', [thing({ name: `many ${i}` })], counter)).toBe(true);
          }),
        ),
      );
      const byName = new Map((await store.find('things', {})).map((doc) => [doc.name, doc.n]));
      expect([byName.get('quick 1'), byName.get('quick 2'), byName.get('slow')]).toEqual([1, 2, 3]);
      const many = Array.from({ length: 20 }, (_, i) => byName.get(`many ${i}`) as number).sort((a, b) => a - b);
      expect(many).toEqual(Array.from({ length: 20 }, (_, i) => i + 4));
      expect(byName.get('counter')).toBe(23);
      // A row that comes with its number (an instance that counts itself) keeps it.
      await store.transaction(async (tx) => {
        await tx.increment('things', counterRow.id, { n: 1 });
        await tx.insert('things', thing({ name: 'counted', n: 24 }));
      });
      expect((await store.find('things', { where: { field: 'name', op: 'eq', value: 'counted' } }))[0].n).toBe(24);
      expect((await store.get('things', counterRow.id))!.n).toBe(24);
      // Without its counter row no numbered row is stored, whether numbered in the commit's text or by the trigger.
      await store.remove('things', counterRow.id);
      for (const askFirst of [false, true]) {
        const orphan = store.transaction(async (tx) => {
          if (askFirst) await tx.count('things', {});
          await tx.insertNumbered?.('things', [thing({ name: `orphan ${askFirst}` })], counter);
        });
        await expect(orphan).rejects.toThrow(/counter row .* missing/);
      }
      expect(await store.count('things', { where: { field: 'name', op: 'textStartsWith', value: 'orphan' } })).toBe(0);
    });
  });

  it('commits inserts of the same moment together, and a refused one fails alone', async () => {
    await withFreshStore(async (store) => {
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) =>
          store.transaction(async (tx) => {
            await tx.insert('things', thing({ name: `t${i}`, code: i % 3 === 0 ? 'taken' : `code ${i}` }));
            await tx.insert('things', thing({ name: `t${i} twin`, code: null }));
          }),
        ),
      );
      const refused = results.filter((r) => r.status === 'rejected');
      expect(refused).toHaveLength(9);
      for (const r of refused) {
        expect(r.reason).toBeInstanceOf(UniqueConflict);
        expect((r.reason as UniqueConflict).field).toBe('code');
      }
      // The refused transactions stored nothing, twins included; every other one everything.
      expect(await store.count('things', {})).toBe(2 * 21);
      expect(await store.count('things', { where: { field: 'code', op: 'eq', value: 'taken' } })).toBe(1);
    });
  });

  it('does not commit a transaction whose held-back insert was refused, even when its code caught the error', async () => {
    await withFreshStore(async (store) => {
      await store.insert('things', thing({ name: 'first', code: 'taken' }));
      const swallowed: unknown[] = [];
      const outcome = store.transaction(async (tx) => {
        await tx.insert('things', thing({ name: 'second', code: 'taken' })); // held back
        await tx.count('things', {}).catch((error) => swallowed.push(error)); // it goes out here, and fails
        await tx.insert('things', thing({ name: 'third', code: 'free' }));
      });
      await expect(outcome).rejects.toBeInstanceOf(UniqueConflict);
      expect(swallowed).toHaveLength(1);
      expect((await store.find('things', {})).map((doc) => doc.name)).toEqual(['first']);
    });
  });

  it('fails every member of a shared commit as unavailable when its connection drops, retrying none', async () => {
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
    const [admin, first, lost, other] = await Promise.all([1, 2, 3, 4].map(() => pool.connect()));
    lost.on('error', () => undefined);
    try {
      await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (n int PRIMARY KEY)`);
      const group = new CommitGroup();
      const insert = (n: number) => `INSERT INTO ${schema}.t VALUES (${n})`;
      // The first commit is under way alone for a while; the next two wait, then share one commit
      // on the connection that has meanwhile been cut.
      const under = group.commit(first, ['SELECT pg_sleep(0.4)', insert(1)]);
      await admin.query('SELECT pg_terminate_backend($1)', [(lost as unknown as { processID: number }).processID]);
      const shared = [group.commit(lost, [insert(2)]), group.commit(other, [insert(3)])];
      await under;
      for (const outcome of await Promise.allSettled(shared)) {
        expect(outcome.status).toBe('rejected');
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailable);
      }
      expect((await admin.query(`SELECT n FROM ${schema}.t ORDER BY n`)).rows).toEqual([{ n: 1 }]);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      for (const client of [admin, first, other]) client.release();
      lost.release(true);
      await pool.end();
    }
  });

  it('writes values into held-back inserts as literals that read back unchanged', async () => {
    await withFreshStore(async (store) => {
      const names = [
        "it's",
        'back\\slash \\',
        "E'\\'; DROP TABLE things; --",
        '$1 $2 $$ $tag$',
        'ünïcödé 😀 \u2028',
        ' ',
      ];
      const meta = { quote: "'", backslash: '\\', nested: { list: [1, 'two', null] } };
      const ids = await store.transaction(async (tx) =>
        Promise.all(
          names.map(
            async (name, i) =>
              (await tx.insert('things', thing({ name, n: 10 - i, x: 0.1 * i, flag: i % 2 === 0, meta }))).id,
          ),
        ),
      );
      const stored = await store.find('things', { where: { field: 'id', op: 'in', value: ids } });
      expect(stored.map((doc) => doc.name).sort()).toEqual([...names].sort());
      for (const doc of stored) {
        const i = names.indexOf(doc.name as string);
        expect([doc.n, doc.x, doc.flag, doc.meta]).toEqual([10 - i, 0.1 * i, i % 2 === 0, meta]);
      }
    });
  });
});

describe('postgres index plan', () => {
  it('serves every declared filter, sortable field and composite index of the example app from an index', async () => {
    const { registry } = await import('../../generated/index.js');
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const store = PgStore.open(POSTGRES_URL, { schema });
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const first = await store.init(registry.model);
      expect(first.added.length).toBeGreaterThan(50);
      expect(await store.init(registry.model)).toEqual({ added: [], dropped: [] });
      await client.query(`SET search_path TO ${schema}`);
      // The tables are empty, so the planner would rightly read them whole and sort. The question is
      // whether an index can serve the query: with scans and sorts discouraged, it picks one that
      // does, and a Sort left in the plan means no index gives the order.
      await client.query('SET enable_seqscan = off');
      await client.query('SET enable_sort = off');
      const nodes = async ({ sql, params }: { sql: string; params: unknown[] }) => {
        const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, params);
        const out: { type: string; index?: string }[] = [];
        const walk = (node: Record<string, unknown>) => {
          out.push({ type: node['Node Type'] as string, index: node['Index Name'] as string | undefined });
          for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
        };
        walk(rows[0]['QUERY PLAN'][0].Plan);
        return out;
      };
      // 5,000 rows per entity, 50 distinct values per column, a tenth archived: the planner has statistics to go by.
      const valueSql: Record<string, string> = {
        text: `'v' || (i % 50)`,
        int: 'i % 50',
        real: '(i % 50)::float8',
        bool: '(i % 2 = 0)',
        json: `jsonb_build_array('v' || (i % 50))`,
      };
      for (const entity of registry.model.entities.filter((e) => e.origin === 'app')) {
        const layout = tableLayout(entity);
        const columns: [string, string][] = [['id', `lpad(to_hex(i), 24, '0')`]];
        for (const column of layout.columns.values()) {
          if (column.field === 'id' || layout.unique.includes(column.field)) continue;
          columns.push([
            column.field,
            column.field === 'archivedAt'
              ? `CASE WHEN i % 10 = 0 THEN '2024-01-01T00:00:00.000Z' END`
              : valueSql[column.kind],
          ]);
          if (column.sortKey) columns.push([column.sortKey, valueSql.text]);
          if (column.fold) columns.push([column.fold, valueSql.text]);
        }
        await client.query(
          `INSERT INTO "${entity.plural}" (${columns.map(([c]) => `"${c}"`).join(', ')}) SELECT ${columns.map(([, v]) => v).join(', ')} FROM generate_series(1, 5000) AS i`,
        );
        await client.query(`ANALYZE "${entity.plural}"`);
      }
      const sample: Record<string, unknown> = {
        string: 'v1',
        url: 'v1',
        int: 1,
        float: 1,
        boolean: true,
        objectId: 'v1',
        isoDate: 'v1',
      };
      let checked = 0;
      for (const entity of registry.model.entities.filter((e) => e.origin === 'app')) {
        const layout = tableLayout(entity);
        const archived: Where[] =
          entity.ownership === 'owned' ? [{ field: 'archivedAt', op: 'exists', value: false }] : [];
        const eq = (field: string): Where => {
          const model = entity.fields.find((f) => f.name === field)!;
          return { field, op: 'eq', value: model.type === 'enum' ? 'v1' : sample[model.type] };
        };
        const served = async (label: string, query: FindQuery) => {
          const plan = await nodes(selectStatement(layout, { limit: 25, ...query }, pgDialect));
          const indexes = plan.filter((n) => n.index?.startsWith('ix_')).map((n) => n.index);
          expect(indexes.length, `${label}: ${JSON.stringify(plan)}`).toBeGreaterThan(0);
          expect(
            plan.map((n) => n.type),
            `${label}: sorted after reading`,
          ).not.toContain('Sort');
          const count = await nodes(countStatement(layout, { where: query.where }, pgDialect));
          expect(
            count.some((n) => n.index?.startsWith('ix_')),
            `${label} count: ${JSON.stringify(count)}`,
          ).toBe(true);
          checked++;
        };
        for (const filter of entity.filters) {
          const field = entity.fields.find((f) => f.name === filter)!;
          if (field.type === 'array' || field.unique || layout.columns.get(filter)?.longText) continue;
          await served(`${entity.plural}?${filter}=`, {
            where: { and: [...archived, eq(filter)] },
            sort: [{ field: 'id', direction: 'desc' }],
          });
        }
        for (const field of entity.sortable) {
          for (const direction of ['asc', 'desc'] as const)
            await served(`${entity.plural}?sort=${direction === 'desc' ? '-' : ''}${field}`, {
              where: { and: archived },
              sort: [
                { field, direction },
                { field: 'id', direction },
              ],
            });
        }
        for (const fields of entity.indexes ?? []) {
          await served(`${entity.plural} index ${fields.join(',')}`, {
            where: { and: [...archived, ...fields.slice(0, -1).map(eq)] },
            sort: [
              { field: fields.at(-1)!, direction: 'desc' },
              { field: 'id', direction: 'desc' },
            ],
          });
        }
      }
      expect(checked).toBeGreaterThan(15);
    } finally {
      await client.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await client.end();
      await store.close();
    }
  });
});

describe('postgres prepared statements', () => {
  it('runs a statement again, unprepared, when another instance changed the table under it', async () => {
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const store = PgStore.open(POSTGRES_URL, { schema, max: 1 });
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await store.init(conformanceModel);
      const doc = {
        id: newId(),
        ownerId: '0'.repeat(24),
        name: 'n',
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
      };
      await store.insert('things', doc);
      // Prepared on the pool's one connection: SELECT * with the columns of now.
      expect((await store.get('things', doc.id))?.name).toBe('n');
      await client.query(`ALTER TABLE ${schema}.things ADD COLUMN "later" TEXT`);
      expect((await store.get('things', doc.id))?.name).toBe('n');
      expect((await store.get('things', doc.id))?.name).toBe('n');
    } finally {
      await client.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await client.end();
      await store.close();
    }
  });
});

describe('postgres settings', () => {
  it('warns at start when autovacuum is off, since the planner then lacks the statistics it gathers', async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    const { autovacuum } = (await client.query('SHOW autovacuum')).rows[0] as { autovacuum: string };
    await client.end();
    const logged: string[] = [];
    const server = await startTestServer(
      {},
      { logger: pino({ level: 'warn' }, { write: (line: string) => void logged.push(line) }) },
    );
    await server.close();
    expect(logged.some((line) => line.includes("PostgreSQL's autovacuum is off"))).toBe(autovacuum === 'off');
  });
});

describe('postgres change notices', () => {
  /** The notices `client` hears on the schema's change channel while `act` runs (and a moment after). */
  async function heard(schema: string, act: () => Promise<unknown>): Promise<string[]> {
    const listener = new pg.Client({ connectionString: POSTGRES_URL });
    await listener.connect();
    const notices: string[] = [];
    listener.on('notification', ({ channel, payload }) => {
      if (channel === changesChannel(schema)) notices.push(payload ?? '');
    });
    try {
      await listener.query(`LISTEN "${changesChannel(schema)}"`);
      await act();
      // A NOTIFY sent after the act's commits arrives after their notices: the channel keeps commit order.
      await listener.query(`NOTIFY "${changesChannel(schema)}", 'end'`);
      while (!notices.includes('end')) await new Promise((resolve) => setTimeout(resolve, 5));
      return notices.filter((notice) => notice !== 'end');
    } finally {
      await listener.end();
    }
  }

  it('announces every commit of a connection that is not a server`s, once per table and transaction', async () => {
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const outside = PgStore.open(POSTGRES_URL, { schema });
    // A server's pool, whose URL names an application of its own: the server's name still leads.
    const server = PgStore.open(`${POSTGRES_URL}?application_name=reports`, { schema, announced: true });
    const psql = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
    try {
      await outside.init(conformanceModel);
      // The sync keeps what it made: a second one changes nothing.
      await server.init(conformanceModel);
      await psql.connect();
      const row = (name: string) => ({
        id: newId(),
        ownerId: '0'.repeat(24),
        name,
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
      });
      expect(
        await heard(schema, async () => {
          await outside.transaction(async (tx) => {
            await tx.insert('things', row('a'));
            await tx.insert('things', row('b'));
            await tx.insert('happenings', { ...row('c'), place: 'x' });
          });
          await psql.query(`UPDATE things SET name = 'z'`);
          await psql.query('BEGIN');
          await psql.query(`DELETE FROM things`);
          await psql.query('ROLLBACK');
          await psql.query('TRUNCATE happenings');
        }),
      ).toEqual(['\nchanged things', '\nchanged happenings', '\nchanged things', '\nchanged happenings']);
      // A server announces its own writes on its bus: its connections notify nothing.
      expect(await heard(schema, () => server.insert('things', row('d')))).toEqual([]);
      const names = await psql.query(
        `SELECT DISTINCT application_name FROM pg_stat_activity WHERE application_name LIKE 'entigen server%'`,
      );
      expect(names.rows.map((r: { application_name: string }) => r.application_name)).toContain(
        'entigen server: reports',
      );
      const { rows } = await psql.query(
        `SELECT count(*)::int AS n FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND t.tgname = 'entigen_changed'`,
        [schema],
      );
      expect(rows[0].n).toBe(conformanceModel.entities.length);
    } finally {
      await psql.end().catch(() => undefined);
      await outside.close();
      await server.close();
    }
  });
});

describe('postgres schema sync', () => {
  it('prepares a schema whose tables are in use without waiting for their readers', async () => {
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const first = PgStore.open(POSTGRES_URL, { schema });
    const reader = new pg.Client({ connectionString: POSTGRES_URL });
    await reader.connect();
    const second = PgStore.open(POSTGRES_URL, { schema });
    try {
      await first.init(conformanceModel);
      // A long read holds its table until it ends; an ALTER TABLE would queue behind it.
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM ${schema}.things`);
      const started = second.init(conformanceModel).then(() => 'ready');
      const blocked = new Promise((resolve) => setTimeout(() => resolve('blocked'), 10_000));
      expect(await Promise.race([started, blocked])).toBe('ready');
    } finally {
      await reader.query('ROLLBACK').catch(() => undefined);
      await second.close();
      await first.close();
      await reader.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
      await reader.end().catch(() => undefined);
    }
  });

  it('makes instances of one schema take turns, while another schema of the database goes on', async () => {
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const holder = new pg.Client({ connectionString: `${POSTGRES_URL}?options=-c%20search_path%3D${schema}` });
    await holder.connect();
    const waiting = PgStore.open(POSTGRES_URL, { schema });
    try {
      // An instance in the middle of preparing `schema`: it holds that schema's turn.
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(7349001, hashtext($1))', [schema]);
      let waited = true;
      const turn = waiting.init(conformanceModel).then(() => {
        waited = false;
      });
      await withFreshStore(async (other) => {
        expect(await other.count('things', {})).toBe(0);
      });
      expect(waited).toBe(true);
      await holder.query('COMMIT');
      await turn;
      expect(waited).toBe(false);
    } finally {
      await holder.end().catch(() => undefined);
      await waiting.close();
    }
  });
});

describe('postgres commit groups, traced', () => {
  it("put a group's COMMIT in the trace of its first sampled member, whichever member comes first", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    enableTracing('test', '0', new SyncContextManager(), provider);
    const schema = `conformance_${randomUUID().replace(/-/g, '')}`;
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 5 });
    const [admin, first, ...members] = await Promise.all([1, 2, 3, 4, 5].map(() => pool.connect()));
    try {
      await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (n int PRIMARY KEY)`);
      const group = new CommitGroup();
      const insert = (n: number) => `INSERT INTO ${schema}.t VALUES (${n})`;
      // The first commit is under way alone for a while; the next three wait and share one
      // commit, a member outside any trace at their head, then two sampled ones.
      const under = group.commit(first, ['SELECT pg_sleep(0.3)', insert(1)]);
      const [a, b] = ['PATCH a', 'PATCH b'].map((name) => startSpan(name, {})!);
      const shared = [
        group.commit(members[0], [insert(2)]),
        group.commit(members[1], [insert(3)], a.context),
        group.commit(members[2], [insert(4)], b.context),
      ];
      await under;
      await Promise.all(shared);
      const commits = exporter.getFinishedSpans().filter((s) => s.name === 'COMMIT');
      expect(commits).toHaveLength(1);
      const [commit] = commits;
      expect(commit.spanContext().traceId).toBe(a.span.spanContext().traceId);
      expect(commit.parentSpanContext?.spanId).toBe(a.span.spanContext().spanId);
      expect(commit.attributes['entigen.group_commit.transactions']).toBe(3);
      expect(commit.links.map((link) => link.context.spanId)).toEqual([b.span.spanContext().spanId]);
      expect((await admin.query(`SELECT n FROM ${schema}.t ORDER BY n`)).rows).toHaveLength(4);
    } finally {
      disableTracing();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      for (const client of [admin, first, ...members]) client.release();
      await pool.end();
    }
  });
});
