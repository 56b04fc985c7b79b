/** One problem found in an input file, pointing at the line and column a user can fix. */
export interface Diagnostic {
  file: string;
  line: number;
  col: number;
  /** Dotted path inside the file, such as `fields.title.type`; empty for the whole file. */
  path: string;
  message: string;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = `${d.file}:${d.line}:${d.col}`;
  return d.path ? `${where} ${d.path}: ${d.message}` : `${where} ${d.message}`;
}

/** Files in name order, then by position, so the report reads top to bottom and never changes order. */
export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return [...list].sort(
    (a, b) =>
      compareText(a.file, b.file) ||
      a.line - b.line ||
      a.col - b.col ||
      compareText(a.path, b.path) ||
      compareText(a.message, b.message),
  );
}

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Thrown by build when any input is invalid; carries every problem at once. */
export class BuildFailure extends Error {
  readonly summary: string;
  constructor(readonly diagnostics: Diagnostic[]) {
    const summary = `${diagnostics.length} problem${diagnostics.length === 1 ? '' : 's'} in entity files`;
    super(`${summary}:\n${diagnostics.map(formatDiagnostic).join('\n')}`);
    this.summary = summary;
  }
}
