import { SYSTEM_CALLER } from '../context/caller.js';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import { ApiError } from '../errors/apiError.js';
import { parseIsoDate } from '../model/parseIsoDate.js';
import { OBJECT_ID_PATTERN } from '../model/patterns.js';
import type { EntityModel } from '../model/types.js';
import type { CompiledValidator } from '../model/validationDetails.js';
import { type Doc, type Store, UniqueConflict } from '../store/types.js';
import { buildNewRecord, newRecordValues, validateBody } from '../write/createRecord.js';
import { newId } from '../write/prepareWrite.js';
import { runWrite } from '../write/writePipeline.js';

/** One record of the file, or why its line could not be read. */
export type SourceLine = { line: number; values: Record<string, unknown> } | { line: number; error: string };

export interface ImportOptions {
  ctx: RuntimeContext;
  entity: EntityModel;
  validate: CompiledValidator;
  /** Reads the file from its start each time it is called (the check pass, then the write). */
  read(): AsyncIterable<SourceLine>;
  /** Check and write everything, then roll it all back. */
  dryRun?: boolean;
  /** Write what is valid in batches, reporting the lines that are not; otherwise all or nothing. */
  continueOnError?: boolean;
  /** Run beforeCreate hooks and log the records' events (afterCommit hooks, webhooks, realtime). */
  hooks?: boolean;
  /** keep: the file's ids (the default); new: fresh ids, told to onIdMapped. */
  ids?: 'keep' | 'new';
  /** The owner of owned records the file gives none (a user id). */
  owner?: string;
  /** Lines before this one are skipped (resuming an import that stopped). */
  fromLine?: number;
  batchSize?: number;
  onIdMapped?(from: string | undefined, to: string, line: number): void;
  progress?(line: number, imported: number): void;
}

export interface ImportError {
  line: number;
  message: string;
}

export interface ImportOutcome {
  /** Records written (with dryRun: that would have been). */
  imported: number;
  errors: ImportError[];
  /** The last line read: --from-line one past it resumes. */
  lastLine: number;
  /** Whether anything was written (false: nothing at all changed). */
  written: boolean;
  /** Refused lines in all (errors lists at most MAX_REPORTED_ERRORS of them). */
  errorCount: number;
}

/** Errors past this many are counted, not kept. */
export const MAX_REPORTED_ERRORS = 1000;
const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN);
/** Fields a file may set that the create body may not: kept as the file says. */
const KEPT = ['id', 'createdAt', 'updatedAt', 'ownerId', 'tenantId'];

interface Prepared {
  line: number;
  body: Record<string, unknown>;
  kept: { id?: string; createdAt?: string; updatedAt?: string; ownerId?: string; tenantId?: string };
}

class Rollback extends Error {}

/**
 * Imports records through the entity's create validator, its references and unique constraints,
 * and optionally its hooks. Without continueOnError it is all or nothing: the whole file is
 * checked first (every bad line reported), then written in one transaction; any refusal there
 * (a unique value taken, a reference missing) rolls back everything.
 */
export async function importRecords(options: ImportOptions): Promise<ImportOutcome> {
  const errors: ImportError[] = [];
  let errorCount = 0;
  const report = (line: number, message: string) => {
    errorCount++;
    if (errors.length < MAX_REPORTED_ERRORS) errors.push({ line, message });
  };
  const from = options.fromLine ?? 1;
  if (!options.continueOnError) {
    // The check pass: nothing is written while any line is wrong.
    let lastLine = 0;
    for await (const source of options.read()) {
      lastLine = source.line;
      if (source.line < from) continue;
      const prepared = prepare(options, source);
      if ('error' in prepared) report(prepared.line, prepared.error);
    }
    if (errorCount > 0)
      return { imported: 0, errors: withMore(errors, errorCount), lastLine, written: false, errorCount };
  }
  let imported = 0;
  let lastLine = 0;
  const run = async (store: Store) => {
    let batch: Prepared[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const rows = batch;
      batch = [];
      if (!options.continueOnError) {
        imported += await writeBatch(options, store, rows);
        return;
      }
      // Each batch commits alone; a refused batch is written line by line to find the culprits.
      try {
        imported += await store.transaction((tx) => writeBatch(options, tx, rows));
      } catch (error) {
        for (const row of rows) {
          try {
            imported += await store.transaction((tx) => writeBatch(options, tx, [row]));
          } catch (single) {
            report(row.line, refusal(single));
          }
        }
        void error;
      }
    };
    for await (const source of options.read()) {
      lastLine = source.line;
      if (source.line < from) continue;
      const prepared = prepare(options, source);
      if ('error' in prepared) {
        report(prepared.line, prepared.error);
        continue;
      }
      batch.push(prepared);
      if (batch.length >= (options.batchSize ?? 500)) {
        await flush();
        options.progress?.(lastLine, imported);
      }
    }
    await flush();
    options.progress?.(lastLine, imported);
  };
  try {
    if (options.continueOnError && !options.dryRun) await run(options.ctx.store);
    else
      await options.ctx.store.transaction(async (tx) => {
        await run(tx);
        if (options.dryRun) throw new Rollback();
      });
  } catch (error) {
    if (!(error instanceof Rollback)) {
      if (!(error instanceof LineRefused)) throw error;
      report(error.line, error.message);
      return { imported: 0, errors: withMore(errors, errorCount), lastLine, written: false, errorCount };
    }
  }
  return {
    imported,
    errors: withMore(errors, errorCount),
    lastLine,
    written: !options.dryRun && imported > 0,
    errorCount,
  };
}

function withMore(errors: ImportError[], count: number): ImportError[] {
  return count > errors.length
    ? [...errors, { line: 0, message: `and ${count - errors.length} more lines with errors` }]
    : errors;
}

/** A store refusal of one line, in all-or-nothing mode: it stops the import. */
class LineRefused extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

function refusal(error: unknown): string {
  if (error instanceof LineRefused) return error.message;
  if (error instanceof UniqueConflict) return `${error.field}: must be unique; the value is taken`;
  if (error instanceof ApiError) return error.details ? describe(error.details) : error.message;
  throw error;
}

function describe(details: Record<string, string>): string {
  return Object.entries(details)
    .map(([field, message]) => `${field}: ${message}`)
    .join('; ');
}

/** A line's values split into the create body (validated) and what the file keeps (ids, times, owner). */
function prepare(options: ImportOptions, source: SourceLine): Prepared | { line: number; error: string } {
  if ('error' in source) return source;
  const { entity } = options;
  const fields = new Map(entity.fields.map((field) => [field.name, field]));
  const body: Record<string, unknown> = {};
  const kept: Prepared['kept'] = {};
  const problems: Record<string, string> = {};
  for (const [name, value] of Object.entries(source.values)) {
    if (value === undefined) continue;
    if (KEPT.includes(name)) {
      if (value === null) continue;
      if (typeof value !== 'string') problems[name] = 'must be a string';
      else kept[name as keyof Prepared['kept']] = value;
      continue;
    }
    const field = fields.get(name);
    // Values the server sets (sizes, urls, archive times) and masked secrets are not the file's to give.
    if (field && (field.system || field.readOnly || field.hidden)) continue;
    if (field?.type === 'encryptedKey' && value === ENCRYPTED_PLACEHOLDER) continue;
    body[name] = value;
  }
  Object.assign(problems, validateBody(options.validate, body) ?? {});
  if (kept.id !== undefined && !OBJECT_ID.test(kept.id)) problems.id = 'must be 24 hexadecimal characters';
  if (kept.tenantId !== undefined && !OBJECT_ID.test(kept.tenantId)) problems.tenantId = 'must be a tenant id';
  for (const name of ['createdAt', 'updatedAt'] as const)
    if (kept[name] !== undefined && !parseIsoDate(kept[name]!)) problems[name] = 'must be an ISO 8601 date and time';
  if (entity.ownership === 'owned') {
    const owner = kept.ownerId ?? options.owner;
    if (!owner) problems.ownerId = 'is required for owned records (give it in the file, or --owner)';
    else if (!OBJECT_ID.test(owner)) problems.ownerId = 'must be a user id (24 hexadecimal characters)';
  }
  if (Object.keys(problems).length > 0) return { line: source.line, error: describe(problems) };
  return { line: source.line, body, kept };
}

/**
 * One batch in the caller's transaction, through the write's stages as the system: references,
 * hooks (with --hooks), the records, their history (changed by `import`) and, with hooks, events.
 */
async function writeBatch(options: ImportOptions, tx: Store, rows: Prepared[]): Promise<number> {
  const { entity } = options;
  const ctx = { ...options.ctx, store: tx };
  try {
    return await runWrite({
      ctx,
      entity,
      caller: SYSTEM_CALLER,
      operation: 'create',
      references: rows.map((row, i) => ({ values: row.body, prefix: `${i}:` })),
      changedBy: 'import',
      logged: options.hooks === true,
      write: async ({ store, now, beforeCreate }) => {
        const docs: Doc[] = [];
        for (const row of rows) {
          const owner = row.kept.ownerId ?? options.owner;
          const caller = owner ? { ...SYSTEM_CALLER, user: { id: owner, email: '', displayName: '' } } : SYSTEM_CALLER;
          let values = newRecordValues(entity, row.body, caller, now);
          if (options.hooks) values = await beforeCreate(values);
          const doc = buildNewRecord(entity, values, caller, ctx, now, row.kept.tenantId ?? null);
          const id = options.ids === 'new' ? newId() : (row.kept.id ?? doc.id);
          if (options.ids === 'new') options.onIdMapped?.(row.kept.id, id, row.line);
          doc.id = id;
          if (row.kept.createdAt) doc.createdAt = new Date(row.kept.createdAt).toISOString();
          if (row.kept.updatedAt) doc.updatedAt = new Date(row.kept.updatedAt).toISOString();
          docs.push(doc);
        }
        if (options.ids !== 'new') await refuseTakenIds(store, entity.plural, rows, docs);
        const inserted = await insertBatch(options, store, rows, docs);
        return {
          result: inserted.length,
          changes: inserted.map((after) => ({ changeType: 'create' as const, after, fresh: true })),
        };
      },
    });
  } catch (error) {
    if (!(error instanceof ApiError) || !error.details || error.code !== 'UNPROCESSABLE_ENTITY') throw error;
    // A reference the batch names that does not exist: the line and field it stands on.
    const [first] = Object.entries(error.details);
    const [index, field] = first[0].split(':');
    if (field === undefined || rows[Number(index)] === undefined) throw error;
    throw new LineRefused(rows[Number(index)].line, `${field}: ${first[1]}`);
  }
}

/**
 * A file's id that a record already has refuses its line, read before the insert: after a
 * refused insert PostgreSQL answers nothing more in the transaction, and the line is what
 * tells the user which record it was.
 */
async function refuseTakenIds(tx: Store, plural: string, rows: Prepared[], docs: Doc[]): Promise<void> {
  const given = docs.filter((_, i) => rows[i].kept.id !== undefined).map((doc) => doc.id as string);
  if (given.length === 0) return;
  const taken = await tx.find(plural, {
    where: { field: 'id', op: 'in', value: given },
    select: ['id'],
    limit: given.length,
  });
  if (taken.length === 0) return;
  const ids = new Set(taken.map((doc) => doc.id));
  const at = docs.findIndex((doc) => ids.has(doc.id));
  throw new LineRefused(rows[at].line, 'id: must be unique; a record with this id exists');
}

/** The batch's records; a unique value already taken refuses the line that holds it. */
async function insertBatch(options: ImportOptions, tx: Store, rows: Prepared[], docs: Doc[]): Promise<Doc[]> {
  try {
    return await tx.insertMany(options.entity.plural, docs);
  } catch (error) {
    if (error instanceof UniqueConflict && rows.length === 1) throw new LineRefused(rows[0].line, refusal(error));
    if (error instanceof UniqueConflict && !options.continueOnError) {
      // Which line: the first whose value is already taken or repeats an earlier one.
      const line = await conflictingLine(tx, options.entity, rows, docs, error.field);
      throw new LineRefused(line, refusal(error));
    }
    throw error;
  }
}

async function conflictingLine(
  tx: Store,
  entity: EntityModel,
  rows: Prepared[],
  docs: Doc[],
  field: string,
): Promise<number> {
  // A value the batch repeats, else one a record outside the batch already holds.
  const seen = new Set<unknown>();
  for (const [i, doc] of docs.entries()) {
    if (seen.has(doc[field])) return rows[i].line;
    seen.add(doc[field]);
  }
  const ids = docs.map((doc) => doc.id);
  for (const [i, doc] of docs.entries()) {
    const [taken] = await tx.find(entity.plural, {
      where: {
        and: [
          { field, op: 'eq', value: doc[field] },
          { field: 'id', op: 'nin', value: ids },
        ],
      },
      limit: 1,
      select: ['id'],
    });
    if (taken) return rows[i].line;
  }
  return rows[0].line;
}
