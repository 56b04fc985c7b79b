import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import type { Diagnostic } from '../../generator/diagnostics.js';

/** The folders whose modules the server loads: the hooks and the job handlers. */
const MODULE_FOLDERS = ['hooks', 'jobs'];

/** What checking the modules found; `skipped` says why nothing was checked. */
export type ModuleCheck = { diagnostics: Diagnostic[] } | { skipped: string };

/**
 * Type-checks the hook and job modules against the generated types, as `tsc -p tsconfig.json`
 * would (the project's tsconfig.json and its own TypeScript), so a misspelled field or a syntax
 * error fails the build at file:line:col instead of the first request. Skipped, saying why, when
 * the project has no TypeScript installed or no module to check.
 */
export async function checkModules(root: string): Promise<ModuleCheck> {
  const files = MODULE_FOLDERS.flatMap((folder) => moduleFiles(join(root, folder)));
  if (files.length === 0) return { skipped: 'no hook or job modules' };
  let ts: typeof import('typescript');
  try {
    const require = createRequire(join(root, 'package.json'));
    ts = (await import(require.resolve('typescript'))) as typeof import('typescript');
    ts = (ts as unknown as { default?: typeof ts }).default ?? ts;
  } catch {
    return { skipped: 'TypeScript is not installed in the project (npm install --save-dev typescript)' };
  }
  const configPath = join(root, 'tsconfig.json');
  let options: import('typescript').CompilerOptions = {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
  };
  if (existsSync(configPath)) {
    const read = ts.readConfigFile(configPath, ts.sys.readFile);
    if (!read.error) options = ts.parseJsonConfigFileContent(read.config, ts.sys, root).options;
  }
  const program = ts.createProgram(files, { ...options, noEmit: true, incremental: false, composite: false });
  const checked = new Set(files.map((file) => resolve(file)));
  const diagnostics = ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && checked.has(resolve(d.file.fileName)) && d.category === ts.DiagnosticCategory.Error)
    .map((d) => {
      const { line, character } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
      return {
        file: relative(root, d.file!.fileName),
        line: line + 1,
        col: character + 1,
        path: '',
        message: ts.flattenDiagnosticMessageText(d.messageText, ' '),
      };
    });
  return { diagnostics };
}

function moduleFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(m?ts)$/.test(name) && !/\.d\.m?ts$/.test(name) && !/\.test\.m?ts$/.test(name))
    .filter((name) => !name.split(/[/\\]/).includes('node_modules'))
    .map((name) => join(dir, name));
}
