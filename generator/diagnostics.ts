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

/** What kinds of file the problems are in: entity files, the config, hook modules. */
function whereFrom(diagnostics: readonly Diagnostic[]): string {
  const kinds = new Set<string>(
    diagnostics.map(({ file }) =>
      /entigen\.config\.ya?ml$/.test(file)
        ? 'entigen.config.yaml'
        : /\.m?ts$/.test(file)
          ? 'hook modules'
          : 'entity files',
    ),
  );
  return ['entity files', 'entigen.config.yaml', 'hook modules'].filter((kind) => kinds.has(kind)).join(' and ');
}

/** Thrown by build when any input is invalid; carries every problem at once. */
export class BuildFailure extends Error {
  readonly summary: string;
  /**
   * `outcome`: what the failure left undone, as the command says it after the summary.
   */
  constructor(
    readonly diagnostics: Diagnostic[],
    readonly outcome = 'nothing written',
  ) {
    const summary = `${diagnostics.length} problem${diagnostics.length === 1 ? '' : 's'} in ${whereFrom(diagnostics)}`;
    super(`${summary}:\n${diagnostics.map(formatDiagnostic).join('\n')}`);
    this.summary = summary;
  }
}
