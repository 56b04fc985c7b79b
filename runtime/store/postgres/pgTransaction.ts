import type pg from 'pg';
import { type Context, inGroupCommit } from '../../telemetry/tracing.js';
import { ident } from '../sql/ident.js';
import type { Statement } from '../sql/statements.js';
import { StoreUnavailable } from '../types.js';
import type { Queryable } from './syncPgSchema.js';

/**
 * One transaction's connection that holds back what needs no answer. BEGIN and the inserts wait
 * until a statement needs an answer, or until COMMIT, and then go out with it as one message of
 * the simple query protocol: a create (its row, its history, its event) costs one round trip
 * instead of five. Queries run one after another, in the order they were asked (pg deprecates
 * overlapping queries on one client, and code in a transaction may overlap them). A statement
 * held back fails when it goes out, so a refused insert surfaces at the next statement or at
 * COMMIT. On PostgreSQL a failed statement ends the transaction either way, and COMMIT would then
 * roll back without a word: so the first failure is remembered, and `commit` throws it even when
 * the code in between caught it and went on.
 */
export class DeferringConnection implements Queryable {
  /** Statements not yet sent. */
  private pending: Held[] = ['BEGIN'];
  /** Whether BEGIN has gone out: only then is there anything to commit or roll back. */
  private begun = false;
  private tail: Promise<unknown> = Promise.resolve();
  /** The first statement that failed: the transaction is over, whatever the caller did with it. */
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly group: CommitGroup,
    /** The transaction's span, when it is traced. */
    private readonly trace?: Context,
  ) {}

  /**
   * Holds back `statement` when every value can be written as a literal; false when it cannot.
   * `numbered`: the insert's last column is null and takes the next value of this counter row.
   */
  defer(statement: Statement, numbered?: Numbering): boolean {
    const held = heldStatement(statement, numbered);
    if (held === undefined) return false;
    this.pending.push(held);
    return true;
  }

  query(sql: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult> {
    const held = this.take();
    const result = this.tail.then(async () => {
      if (held) await this.client.query(held);
      return typeof sql === 'string' ? this.client.query(sql, params) : this.client.query(sql);
    });
    this.tail = result.catch((error) => {
      this.failure ??= { error };
    });
    return result;
  }

  /**
   * Sends what is held back and COMMIT, in one message; nothing when nothing was asked. A
   * transaction that asked nothing before (it only inserted) commits with others of the moment.
   */
  async commit(): Promise<void> {
    await this.tail;
    if (this.failure) throw this.failure.error;
    if (!this.begun) {
      const inserts = this.pending.slice(1);
      this.pending = [];
      if (inserts.length > 0) await this.group.commit(this.client, inserts, this.trace);
      return;
    }
    const held = this.take();
    if (held) await this.client.query(`${held};COMMIT`);
    else await this.client.query('COMMIT');
  }

  async rollback(): Promise<void> {
    this.pending = [];
    await this.tail;
    if (this.begun) await this.client.query('ROLLBACK');
  }

  /** The held-back statements as one text, emptied; undefined when there are none. */
  private take(): string | undefined {
    if (this.pending.length === 0) return undefined;
    const text = joinHeld(this.pending);
    this.pending = [];
    this.begun = true;
    return text;
  }
}

/** At most this many transactions, and this much text, commit as one. */
const MAX_GROUP = 64;
const MAX_GROUP_TEXT = 1 << 20;
interface Waiting {
  client: pg.PoolClient;
  statements: readonly Held[];
  /** The statements' length as text, about. */
  size: number;
  settle: (error?: unknown) => void;
  /** The trace of the transaction (with tracing on). */
  trace?: Context;
}

/**
 * Transactions of this instance that only insert, committed together: while one commit is under
 * way the next ones wait, then go out as one transaction in one message, so that they share one
 * WAL flush and take the event log's counter row once (it is held from the commit's start to its
 * end; transactions committing one by one would each wait for the last one's flush). When the
 * database refuses the shared transaction (a unique value taken, a deadlock), none of it was
 * stored, and each transaction commits again alone, on its own connection: it then fails or
 * succeeds on its own. When the connection fails instead, nobody knows whether the commit took
 * place; every member fails as unavailable, as a lone transaction's lost COMMIT does, rather than
 * trying again into a conflict with its own stored rows.
 */
export class CommitGroup {
  private waiting: Waiting[] = [];
  /**
   * Whether a group is under way. One at a time: the transactions that arrive meanwhile wait and
   * then share the next commit (measured: with two under way, groups were smaller and creates a
   * third slower).
   */
  private busy = false;

  /** Commits `statements` as one transaction, with others of the moment when it can. */
  commit(client: pg.PoolClient, statements: readonly Held[], trace?: Context): Promise<void> {
    let size = 0;
    for (const held of statements) size += typeof held === 'string' ? held.length : held.row.length;
    return new Promise((resolve, reject) => {
      this.waiting.push({
        client,
        statements,
        size,
        settle: (error) => (error === undefined ? resolve() : reject(error)),
        trace,
      });
      this.next();
    });
  }

  /** Starts the next group of those waiting, unless one is under way. */
  private next(): void {
    if (this.busy || this.waiting.length === 0) return;
    let size = 0;
    let count = 0;
    while (count < this.waiting.length && count < MAX_GROUP && size < MAX_GROUP_TEXT)
      size += this.waiting[count++].size;
    this.busy = true;
    void this.traced(this.waiting.splice(0, count)).finally(() => {
      this.busy = false;
      this.next();
    });
  }

  /** The group's commit, in a span of its first traced member's trace (tracing on). */
  private traced(group: Waiting[]): Promise<void> {
    return inGroupCommit('postgresql', group, () => this.run(group));
  }

  private async run(group: Waiting[]): Promise<void> {
    if (group.length > 1) {
      const whole = joinHeld(
        group.flatMap((w) => w.statements),
        true,
      );
      const error = await alone(group[0].client, whole);
      if (error === undefined || !refusedByDatabase(error)) {
        const outcome =
          error && new StoreUnavailable(`PostgreSQL did not answer a commit: ${(error as Error).message}`);
        for (const w of group) w.settle(outcome);
        return;
      }
    }
    await Promise.all(group.map(async (w) => w.settle(await alone(w.client, joinHeld(w.statements, true)))));
  }
}

/**
 * Whether the database answered with a refusal of the statements (a SQLSTATE outside connection
 * exceptions and operator intervention): then nothing was stored, and trying again is safe.
 */
function refusedByDatabase(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57');
}

/** Runs `text` as one transaction on `client`; the error when it failed (and was rolled back). */
async function alone(client: pg.PoolClient, text: string): Promise<unknown> {
  try {
    await client.query(`BEGIN;${text};COMMIT`);
    return undefined;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    return error ?? new Error('the commit failed');
  }
}

/**
 * A statement held back: its text, or the one row of an insert apart from the statement's start
 * (`into`: `INSERT INTO "table" (columns)`), so that rows going to the same columns one after
 * another go out as one multi-row INSERT. A numbered row's last column is null: the commit
 * numbering trigger sets it as the transaction commits, or the text of a whole transaction
 * numbers it itself (joinHeld).
 */
export type Held = string | { table: string; into: string; row: string; numbered?: Numbering };

/** The counter row whose next value a row takes: its table (as an identifier), its id, and the field counted up. */
export interface Numbering {
  table: string;
  id: string;
  field: string;
}

/** An insert of one row, as insertStatement writes it: the table, the columns, then placeholders only. */
const SINGLE_ROW_INSERT =
  /^(INSERT INTO ("(?:[^"]|"")+") \("(?:[^"]|"")+"(?:, "(?:[^"]|"")+")*\)) VALUES (\(\$\d+(?:, \$\d+)*\))$/;
/** How a numbered row ends: its last value, null. */
const UNNUMBERED = 'NULL)';

/** The statement held back with its values as literals; undefined when a value cannot be one. */
export function heldStatement(statement: Statement, numbered?: Numbering): Held | undefined {
  const insert = SINGLE_ROW_INSERT.exec(statement.sql);
  if (!insert) return withLiterals(statement);
  const row = withLiterals({ sql: insert[3], params: statement.params });
  if (row === undefined) return undefined;
  const held = { table: insert[2], into: insert[1], row };
  return numbered && row.endsWith(UNNUMBERED) ? { ...held, numbered } : held;
}

/**
 * The held statements as one text. A row joins the insert before it into the same table when
 * that one names the same columns: PostgreSQL then parses, plans and starts one statement for all
 * of them (a shared commit carries three inserts a create). Each table's rows keep their order
 * (the commit-time numbering of a table's rows follows it); rows of different tables may go out
 * in another order, which changes nothing (no foreign keys, no triggers but the deferred
 * numbering). Text statements move nowhere and nothing else moves past them.
 *
 * `whole`: the text is a whole transaction, BEGIN to COMMIT in one message. Numbered rows then go
 * last, after one increment of their counter row that takes a number for each: the trigger
 * would increment the counter and then update each row again as the transaction commits. The
 * counter row is still locked only at the end, until COMMIT, so numbers still follow commit order.
 */
export function joinHeld(held: readonly Held[], whole = false): string {
  const out: { into?: string; parts: string[] }[] = [];
  const lastOfTable = new Map<string, number>();
  const numbered: { into: string; parts: string[] }[] = [];
  const counters = new Map<string, { numbering: Numbering; setting: string; taken: number }>();
  for (const statement of held) {
    if (typeof statement === 'string') {
      out.push({ parts: [statement] });
      lastOfTable.clear();
      continue;
    }
    if (whole && statement.numbered) {
      const { table, id, field } = statement.numbered;
      const key = `${table}\u0000${id}\u0000${field}`;
      let counter = counters.get(key);
      if (!counter) {
        counter = { numbering: statement.numbered, setting: `entigen.number_${counters.size + 1}`, taken: 0 };
        counters.set(key, counter);
      }
      counter.taken++;
      const row = `${statement.row.slice(0, -UNNUMBERED.length)}current_setting('${counter.setting}')::bigint + ${counter.taken})`;
      const last = numbered.at(-1);
      if (last?.into === statement.into) last.parts.push(row);
      else numbered.push({ into: statement.into, parts: [row] });
      continue;
    }
    const at = lastOfTable.get(statement.table);
    if (at !== undefined && out[at].into === statement.into) {
      out[at].parts.push(statement.row);
      continue;
    }
    lastOfTable.set(statement.table, out.length);
    out.push({ into: statement.into, parts: [statement.row] });
  }
  const texts = out.map(({ into, parts }) => (into === undefined ? parts[0] : `${into} VALUES ${parts.join(', ')}`));
  for (const { numbering, setting, taken } of counters.values()) texts.push(takeNumbers(numbering, setting, taken));
  for (const { into, parts } of numbered) texts.push(`${into} VALUES ${parts.join(', ')}`);
  return texts.join(';');
}

/**
 * Increments the counter row by `count` and keeps the value before in `setting`, for the rest of
 * the transaction. A missing counter row leaves a setting that no row's number can be read from,
 * so the transaction fails naming it.
 */
function takeNumbers({ table, id, field }: Numbering, setting: string, count: number): string {
  const value = ident(field);
  return (
    `WITH taken AS (UPDATE ${table} SET ${value} = ${value} + ${count} WHERE "id" = ${literalOf(id)} RETURNING ${value} AS "value") ` +
    `SELECT set_config('${setting}', coalesce((SELECT "value" - ${count} FROM taken)::text, ${literalOf(`the counter row ${id} is missing`)}), true)`
  );
}

/**
 * The statement with its parameters written in as literals, as pg would send them as text:
 * strings as escape-string literals (whatever standard_conforming_strings says), numbers and
 * booleans as their text, null as NULL. Undefined for any other value, or a string holding a NUL
 * (which would end the message's text early).
 */
export function withLiterals({ sql, params }: Statement): string | undefined {
  const literals: string[] = [];
  for (const value of params) {
    const literal = literalOf(value);
    if (literal === undefined) return undefined;
    literals.push(literal);
  }
  return sql.replace(/\$(\d+)/g, (_, n: string) => literals[Number(n) - 1]);
}

function literalOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string')
    return value.includes('\0') ? undefined : `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
  if (typeof value === 'number') return Number.isFinite(value) ? `'${value}'` : undefined;
  if (typeof value === 'boolean' || typeof value === 'bigint') return `'${value}'`;
  return undefined;
}
