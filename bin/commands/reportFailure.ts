import { BuildFailure, formatDiagnostic } from '../../generator/diagnostics.js';
import { referenceHint } from './referenceHint.js';

/** Prints what went wrong to stderr and sets a failing exit code; never a stack trace for user errors. */
export function reportFailure(error: unknown): void {
  if (error instanceof BuildFailure) {
    for (const diagnostic of error.diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
    process.stderr.write(`entigen: ${error.summary}; ${error.outcome}\n`);
  } else {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`entigen: ${message}\n`);
    // A wrong setting: say where the reference describes it.
    const hint = referenceHint(message);
    if (hint) process.stderr.write(`entigen: see ${hint}\n`);
    if (process.env.ENTIGEN_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  }
  process.exitCode = 1;
}
