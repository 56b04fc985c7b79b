import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { EntityModel } from '../model/types.js';
import type { SourceLine } from './importRecords.js';
import { fromCell, type TransferFormat } from './recordFormat.js';

/** A line longer than this is refused rather than read (a JSON line or a CSV record). */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * The records of a file, streamed, each with its line number (CSV: the line its record ends
 * on, the header being line 1). A line that cannot be read is reported and the rest goes on.
 */
export function readSource(path: string, format: TransferFormat, entity: EntityModel): () => AsyncIterable<SourceLine> {
  return format === 'csv' ? () => readCsv(path, entity) : () => readJsonLines(path);
}

async function* readJsonLines(path: string): AsyncIterable<SourceLine> {
  let line = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const text of lines) {
    line++;
    if (text.trim() === '') continue;
    if (text.length > MAX_LINE_BYTES) {
      yield { line, error: `is longer than ${MAX_LINE_BYTES} characters` };
      continue;
    }
    try {
      const values = JSON.parse(text) as unknown;
      if (typeof values !== 'object' || values === null || Array.isArray(values))
        yield { line, error: 'is not a JSON object' };
      else yield { line, values: values as Record<string, unknown> };
    } catch (error) {
      yield { line, error: `is not JSON: ${(error as Error).message}` };
    }
  }
}

async function* readCsv(path: string, entity: EntityModel): AsyncIterable<SourceLine> {
  const fields = new Map(entity.fields.map((field) => [field.name, field]));
  // csv-parse is loaded by the first CSV import, not by every server at start.
  const { parse } = await import('csv-parse');
  const parser = createReadStream(path).pipe(
    parse({ bom: true, relax_column_count: true, skip_empty_lines: true, max_record_size: MAX_LINE_BYTES, info: true }),
  );
  let header: string[] | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!header) {
        header = record.map((name) => name.trim());
        const unknown = header.filter((name) => !fields.has(name));
        if (unknown.length > 0) {
          yield { line: info.lines, error: `the header names no field of ${entity.plural}: ${unknown.join(', ')}` };
          return;
        }
        continue;
      }
      if (record.length !== header.length) {
        yield { line: info.lines, error: `has ${record.length} cells; the header has ${header.length}` };
        continue;
      }
      const values: Record<string, unknown> = {};
      for (const [i, name] of header.entries()) values[name] = fromCell(fields.get(name), record[i]);
      yield { line: info.lines, values };
    }
  } catch (error) {
    yield { line: Number((error as { lines?: number }).lines ?? 0), error: `is not CSV: ${(error as Error).message}` };
  }
}
