import type { AppModel } from '../../model/types.js';
import type { TableLayout } from '../common/tableLayout.js';
import type * as store from '../types.js';
import { runAggregate } from './aggregateStatement.js';
import type { SqlDialect } from './dialect.js';
import { decodeRow, decodeValues, encodeFields, rowShape } from './rowCodec.js';
import { countStatement, getStatement, incrementStatement, type Statement, selectStatement } from './statements.js';

export type Row = Record<string, unknown>;
/** A row as its values, in the statement's column order. */
export type Values = unknown[];

/**
 * What SQLite and PostgreSQL share: the reads and the increment are one statement each, built by
 * sql/statements.ts in the store's dialect and decoded by the table layout. An adapter says how a
 * statement runs (`rows`, `row`) and keeps the writes whose text index differs (insert, update,
 * remove), the transactions and the connection.
 */
export abstract class SqlStore implements store.Store {
  abstract readonly kind: 'sqlite' | 'postgres';
  /** The tables of the model, by plural, filled by init. */
  protected abstract readonly layouts: Map<string, TableLayout>;
  protected abstract readonly dialect: SqlDialect;
  /** SQLite keeps booleans as 0 and 1. */
  protected abstract readonly booleansAsIntegers: boolean;

  /** Every row a statement answers (at once where the driver is synchronous: one await less on the read path). */
  protected abstract rows(statement: Statement): Row[] | Promise<Row[]>;
  /** The first row a statement answers. */
  protected abstract row(statement: Statement): Row | undefined | Promise<Row | undefined>;
  /** Every row of a SELECT as its values (the records' reads: no object per row to build and drop). */
  protected abstract valueRows(statement: Statement): Values[] | Promise<Values[]>;

  abstract init(model: AppModel): Promise<store.SchemaChanges>;
  abstract insert(collection: string, doc: store.Doc): Promise<store.Doc>;
  abstract insertMany(collection: string, docs: store.Doc[]): Promise<store.Doc[]>;
  abstract update(collection: string, id: string, set: store.UpdateSet, where?: store.Where): Promise<store.Doc | null>;
  abstract remove(collection: string, id: string, where?: store.Where): Promise<boolean>;
  abstract transaction<T>(fn: (tx: store.Store) => Promise<T>): Promise<T>;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;

  async find(collection: string, query: store.FindQuery): Promise<store.Doc[]> {
    const layout = this.layout(collection);
    const { select, ...statement } = selectStatement(layout, query, this.dialect);
    const shape = rowShape(layout, select);
    return (await this.valueRows(statement)).map((values) => decodeValues(shape, values));
  }

  async count(collection: string, query: store.CountQuery): Promise<number> {
    return (await this.row(countStatement(this.layout(collection), query, this.dialect)))!.n as number;
  }

  aggregate(collection: string, query: store.AggregateQuery): Promise<store.AggregateResult> {
    return runAggregate(this.layout(collection), query, this.dialect, async (statement) => this.rows(statement));
  }

  async get(collection: string, id: string, where?: store.Where): Promise<store.Doc | null> {
    const layout = this.layout(collection);
    const [values] = await this.valueRows(getStatement(layout, id, where, this.dialect));
    return values ? decodeValues(rowShape(layout), values) : null;
  }

  async increment(
    collection: string,
    id: string,
    by: store.IncrementInput,
    set: store.UpdateSet = {},
    where?: store.Where,
  ): Promise<store.Doc | null> {
    const layout = this.layout(collection);
    const values = encodeFields(layout, set, this.booleansAsIntegers);
    const row = await this.row(incrementStatement(layout, id, by, values, where, this.dialect));
    return row ? decodeRow(layout, row) : null;
  }

  protected layout(collection: string): TableLayout {
    const layout = this.layouts.get(collection);
    if (!layout) throw new Error(`unknown collection ${collection}`);
    return layout;
  }
}
