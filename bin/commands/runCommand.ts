import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { reportFailure } from './reportFailure.js';

/**
 * `entigen run FILE [args...]`: runs a TypeScript (or JavaScript) file of the project through
 * entigen's own tsx, so scripts that use generated/ (the typed client, repositories) need no
 * TypeScript setup of their own. The file sees its arguments in process.argv after its path.
 */
export async function runCommand(file: string, args: string[]): Promise<void> {
  try {
    const path = resolve(file);
    if (!existsSync(path)) throw new Error(`${file} not found`);
    process.argv = [process.argv[0], path, ...args];
    await tsImport(pathToFileURL(path).href, import.meta.url);
  } catch (error) {
    reportFailure(error);
  }
}
