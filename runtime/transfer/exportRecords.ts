import { stringify } from 'csv-stringify/sync';
import qs from 'qs';
import type { RuntimeContext } from '../context/runtimeContext.js';
import { presentRecord } from '../entities/presentRecord.js';
import { newDetails, validationError } from '../errors/apiError.js';
import { isListParameter } from '../model/listParameters.js';
import type { EntityModel } from '../model/types.js';
import { parseConditions } from '../query/parseListQuery.js';
import type { Doc, Where } from '../store/types.js';
import { csvColumns, type TransferFormat, toCell } from './recordFormat.js';

const PAGE = 1000;
/** A --where longer than this is not a filter anyone types. */
const MAX_WHERE = 4000;

/**
 * `--where` in the list endpoint's own query syntax (`kind=news&views[gte]=100&dateFrom=2026-01-01`):
 * the same filters, operators and date range, checked the same way. Without it, every record,
 * archived ones too; with it, archived records only with includeArchived=true, as in a list.
 */
export function exportWhere(entity: EntityModel, where: string | undefined): Where | undefined {
  if (where === undefined) return undefined;
  if (where.length > MAX_WHERE) throw validationError({ where: `must be at most ${MAX_WHERE} characters` });
  const raw = qs.parse(where.replace(/^\?/, ''), { depth: 1, parameterLimit: 100, arrayLimit: 100 });
  const errors = newDetails();
  const fields = new Map(entity.fields.filter((f) => !f.hidden).map((f) => [f.name, f]));
  for (const key of Object.keys(raw)) {
    if (['limit', 'page', 'skip', 'offset', 'sort', 'cursor', 'select', 'populate', 'trash'].includes(key))
      errors[key] = 'does not apply to an export';
    else if (!isListParameter(key) && !entity.filters.includes(key)) errors[key] = 'is not a known query parameter';
  }
  const conditions = parseConditions(entity, raw, fields, (key, message) => {
    errors[key] ??= message;
    return undefined;
  });
  if (conditions.text !== undefined) errors.q = 'does not apply to an export (search ranks, an export lists)';
  if (Object.keys(errors).length > 0) throw validationError(errors, 'Invalid --where');
  const all = [...conditions.where];
  if (!conditions.includeArchived && entity.fields.some((f) => f.name === 'archivedAt'))
    all.push({ field: 'archivedAt', op: 'eq', value: null });
  return all.length === 0 ? undefined : all.length === 1 ? all[0] : { and: all };
}

/**
 * Every matching record as a response shows it (hidden fields left out, encrypted values
 * masked), in id order, a page at a time: JSON lines, or CSV with a header row. Memory stays one
 * page whatever the size of the collection. Records in the trash are never exported (the store
 * keeps them out of sight): an import of the file would bring deleted data back to life.
 */
export async function* exportRecords(
  ctx: RuntimeContext,
  entity: EntityModel,
  format: TransferFormat,
  where?: Where,
  /** CSV: text that a spreadsheet would run as a formula is written as it is (toCell). */
  keepFormulas = false,
): AsyncIterable<string> {
  const columns = csvColumns(entity);
  if (format === 'csv') yield stringify([columns.map((field) => field.name)]);
  let after: string | undefined;
  for (;;) {
    const conditions = [
      ...(where ? [where] : []),
      ...(after ? [{ field: 'id', op: 'gt', value: after } as Where] : []),
    ];
    const page: Doc[] = await ctx.store.find(entity.plural, {
      ...(conditions.length ? { where: conditions.length === 1 ? conditions[0] : { and: conditions } } : {}),
      sort: [{ field: 'id', direction: 'asc' }],
      limit: PAGE,
    });
    if (page.length === 0) return;
    const shown = page.map((doc) => presentRecord(entity, doc));
    yield format === 'csv'
      ? stringify(shown.map((doc) => columns.map((field) => toCell(field, doc[field.name], keepFormulas))))
      : `${shown.map((doc) => JSON.stringify(doc)).join('\n')}\n`;
    if (page.length < PAGE) return;
    after = page[page.length - 1].id;
  }
}
