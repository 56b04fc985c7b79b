import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/cli.js';
import { sourceFiles } from './importGraph.js';

// The fixed API is declared once (runtime/api/) and its handlers read what the declarations
// checked: these hold that shape as the code grows.

const code = sourceFiles(repoRoot, ['runtime', 'generator', 'bin']);
const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

/** Middleware of the pipeline that reads every body before any route (size, idempotency, unstorable input). */
const PIPELINE = new Set([
  'runtime/http/declaredRouter.ts',
  'runtime/http/idempotency.ts',
  'runtime/http/refuseUnstorableInput.ts',
  'runtime/http/jsonBody.ts',
  'runtime/http/refusePrototypeKeys.ts',
]);

describe('route declarations', () => {
  it('are written only in the route layer: no other file builds schemas with TypeBox', () => {
    const builders = code.filter((file) => /from '@sinclair\/typebox'/.test(read(file)));
    expect(builders.filter((file) => !file.startsWith('runtime/api/') && !PIPELINE.has(file))).toEqual([]);
    expect(builders).toContain('runtime/api/schemas.ts');
  });

  it('leave no handler reading a body nothing checked', () => {
    const readers = code.filter((file) => file.startsWith('runtime/http/') && !PIPELINE.has(file));
    const unchecked: string[] = [];
    for (const file of readers) {
      for (const [index, line] of read(file).split('\n').entries()) {
        if (!line.includes('req.body')) continue;
        // Handed to an entity operation (checked by the generated validators, as the declaration
        // says) or read by readBody.
        if (/\bbody: req\.body\b|readBody\(req\.body\b|bodyCheckedBy === 'entity' \? req\.body : readBody\(/.test(line))
          continue;
        // Handed to the MCP SDK's transport, which checks each message against the JSON-RPC
        // schemas (each tool's arguments are then checked against its input schema); a message is
        // looked at for its method alone before.
        if (file === 'runtime/http/mcpRoutes.ts' && /handleRequest\(req, res,|isInitialize\(req\.body\)/.test(line))
          continue;
        unchecked.push(`${file}:${index + 1}: ${line.trim()}`);
      }
    }
    expect(unchecked).toEqual([]);
  });

  it('are the only source of the fixed operations in the OpenAPI emitter', () => {
    const emitter = sourceFiles(repoRoot, ['generator/emit/openapi']).map(read).join('\n');
    expect(emitter).toContain('fixedRoutes(model)');
    // An operation written by hand would name its operationId here.
    expect(emitter).not.toMatch(/operationId: '[a-z]+_[A-Za-z]+'/);
  });
});
