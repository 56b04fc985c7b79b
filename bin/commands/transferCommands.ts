import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Registry } from '../../runtime/context/defineRegistry.js';
import type { RuntimeContext } from '../../runtime/context/runtimeContext.js';
import { ApiError } from '../../runtime/errors/apiError.js';
import { USERS } from '../../runtime/model/collections.js';
import { exportRecords, exportWhere } from '../../runtime/transfer/exportRecords.js';
import { importRecords } from '../../runtime/transfer/importRecords.js';
import { readSource } from '../../runtime/transfer/readSource.js';
import { formatOf } from '../../runtime/transfer/recordFormat.js';
import { commandContext, openCommandStore } from './commandContext.js';
import { progressLine } from './progressLine.js';
import { reportFailure } from './reportFailure.js';
import { loadRegistry } from './serveCommand.js';

export interface ExportOptions {
  all?: boolean;
  format?: string;
  where?: string;
  to?: string;
  keepFormulas?: boolean;
  out: string;
}

export interface ImportOptions {
  format?: string;
  dryRun?: boolean;
  continueOnError?: boolean;
  hooks?: boolean;
  fromLine?: string;
  ids?: string;
  idMap?: string;
  owner?: string;
  out: string;
}

/** Errors printed at most; the rest are counted. */
const SHOWN_ERRORS = 100;

async function withContext<T>(out: string, work: (ctx: RuntimeContext, registry: Registry) => Promise<T>): Promise<T> {
  const root = resolve('.');
  const registry = await loadRegistry(root, out);
  const store = await openCommandStore(root, registry.model);
  try {
    return await work(await commandContext(registry, store, 'transfer'), registry);
  } finally {
    await store.close();
  }
}

function entityNamed(registry: Registry, plural: string) {
  const entity = registry.entities.get(plural);
  if (!entity || entity.model.internal)
    throw new Error(
      `no entity "${plural}"; the entities are ${[...registry.entities.values()]
        .filter((e) => !e.model.internal)
        .map((e) => e.model.plural)
        .join(', ')}`,
    );
  return entity;
}

/**
 * `entigen export <plural>` (to stdout or --to FILE) or `--all --to FOLDER` (one file per entity):
 * records as the API shows them, JSON lines or CSV, a page at a time.
 */
export async function exportCommand(plural: string | undefined, options: ExportOptions): Promise<void> {
  try {
    if (options.all === (plural !== undefined)) throw new Error('name one entity, or --all (with --to FOLDER)');
    const format = formatOf(options.to ?? '', options.format ?? (options.to ? undefined : 'jsonl'));
    await withContext(options.out, async (ctx, registry) => {
      if (options.all) {
        if (!options.to) throw new Error('--all writes one file per entity: give --to FOLDER');
        if (options.where) throw new Error('--where names the filters of one entity; leave out --all');
        mkdirSync(options.to, { recursive: true });
        const entities = [...registry.entities.values()].filter((e) => !e.model.internal);
        for (const { model } of entities) {
          const count = await writeAll(
            exportRecords(ctx, model, format, undefined, options.keepFormulas),
            join(options.to, `${model.plural}.${format}`),
          );
          process.stderr.write(`entigen: ${model.plural}: ${count} records\n`);
        }
        return;
      }
      const { model } = entityNamed(registry, plural!);
      const lines = exportRecords(ctx, model, format, exportWhere(model, options.where), options.keepFormulas);
      if (options.to) {
        const count = await writeAll(lines, options.to);
        process.stderr.write(`entigen: ${model.plural}: ${count} records written to ${options.to}\n`);
      } else for await (const chunk of lines) if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
    });
  } catch (error) {
    reportFailure(error instanceof ApiError ? describeApiError(error) : error);
  }
}

async function writeAll(lines: AsyncIterable<string>, path: string): Promise<number> {
  const out = createWriteStream(path);
  let count = 0;
  for await (const chunk of lines) {
    count += chunk.split('\n').length - 1;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return count;
}

/**
 * `entigen import <plural> <file>`: through the create validator, references and unique
 * constraints; every bad line reported with its number; all or nothing unless --continue-on-error.
 */
export async function importCommand(plural: string, file: string, options: ImportOptions): Promise<void> {
  try {
    if (!existsSync(file) || !statSync(file).isFile()) throw new Error(`${file}: no such file`);
    const format = formatOf(file, options.format);
    const fromLine = options.fromLine === undefined ? undefined : Number(options.fromLine);
    if (fromLine !== undefined && (!Number.isInteger(fromLine) || fromLine < 1))
      throw new Error('--from-line must be a line number, 1 or more');
    if (options.ids !== undefined && options.ids !== 'keep' && options.ids !== 'new')
      throw new Error('--ids must be keep or new');
    if (options.idMap && options.ids !== 'new') throw new Error('--id-map records new ids: use it with --ids new');
    await withContext(options.out, async (ctx, registry) => {
      const { model, validators } = entityNamed(registry, plural);
      const owner = options.owner ? await userId(ctx, options.owner) : undefined;
      const map = options.idMap ? createWriteStream(options.idMap) : undefined;
      map?.write('line,from,to\n');
      const size = statSync(file).size;
      const progress = progressLine();
      const started = Date.now();
      if (!options.hooks) ctx.hooks = new Map();
      const outcome = await importRecords({
        ctx,
        entity: model,
        validate: validators.create,
        read: readSource(file, format, model),
        dryRun: options.dryRun,
        continueOnError: options.continueOnError,
        hooks: options.hooks,
        ids: options.ids as 'keep' | 'new' | undefined,
        owner,
        fromLine,
        onIdMapped: (from, to, line) => map?.write(`${line},${from ?? ''},${to}\n`),
        progress: (line, imported) => progress.show(`line ${line}: ${imported} imported (${size} bytes in the file)`),
      });
      progress.done();
      if (map) {
        map.end();
        await once(map, 'close');
      }
      const shown = outcome.errors.slice(0, SHOWN_ERRORS);
      for (const error of shown)
        process.stderr.write(error.line ? `${file}:${error.line}: ${error.message}\n` : `${file}: ${error.message}\n`);
      if (outcome.errors.length > shown.length)
        process.stderr.write(`${file}: ${outcome.errors.length - shown.length} more errors not shown\n`);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const verb = options.dryRun ? 'would import' : 'imported';
      process.stdout.write(
        `entigen: ${model.plural}: ${verb} ${outcome.imported} records from ${outcome.lastLine} lines in ${seconds} s${
          outcome.errors.length ? `; ${outcome.errors.length} lines refused` : ''
        }${!outcome.written && !options.dryRun && outcome.errors.length ? '; nothing was written' : ''}\n`,
      );
      if (outcome.errors.length > 0) process.exitCode = 1;
    });
  } catch (error) {
    reportFailure(error instanceof ApiError ? describeApiError(error) : error);
  }
}

/** --owner: a user id or the email of an account. */
async function userId(ctx: RuntimeContext, owner: string): Promise<string> {
  const [user] = await ctx.store.find(USERS, {
    where: /^[0-9a-f]{24}$/.test(owner)
      ? { field: 'id', op: 'eq', value: owner }
      : { field: 'email', op: 'eq', value: owner.toLowerCase() },
    limit: 1,
    select: ['id'],
  });
  if (!user) throw new Error(`--owner: no user ${owner}`);
  return user.id;
}

function describeApiError(error: ApiError): Error {
  const details = error.details
    ? `: ${Object.entries(error.details)
        .map(([key, message]) => `${key} ${message}`)
        .join('; ')}`
    : '';
  return new Error(`${error.message}${details}`);
}
