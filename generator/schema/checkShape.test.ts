import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import { compileShapeValidator, shapeValidatorsModule } from './checkShape.js';

/** The module the package's compile step writes, evaluated as CommonJS. */
function written(): Record<'entity' | 'config', ValidateFunction> & { schemasHash: string } {
  const exports = {} as Record<'entity' | 'config', ValidateFunction> & { schemasHash: string };
  new Function('exports', 'require', shapeValidatorsModule())(exports, createRequire(import.meta.url));
  return exports;
}

/** Every entity and config file of the golden cases (most of them broken on purpose), the package's and the example's. */
function corpus(): { entity: unknown[]; config: unknown[] } {
  const entity: unknown[] = [];
  const config: unknown[] = [];
  const readFolder = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n))) {
      try {
        entity.push(parse(readFileSync(join(dir, name), 'utf8'), { logLevel: 'error' }));
      } catch {
        // Not YAML at all: the shape check never sees it.
      }
    }
  };
  const golden = join(packageRoot, 'test', 'golden');
  for (const name of readdirSync(golden)) {
    readFolder(join(golden, name, 'entities'));
    const configFile = join(golden, name, 'entigen.config.yaml');
    if (existsSync(configFile)) config.push(parse(readFileSync(configFile, 'utf8')));
  }
  readFolder(join(packageRoot, 'entities'));
  readFolder(join(packageRoot, 'entities', 'builtin'));
  config.push(parse(readFileSync(join(packageRoot, 'entigen.config.yaml'), 'utf8')));
  // Shapes no file above has: wrong types at every level.
  entity.push(null, [], 'text', { version: 2, name: 'x', plural: 3, fields: [] }, { fields: { a: { type: 'nope' } } });
  config.push(null, { version: 1, features: 'all', auth: { sessions: 'long' } }, { roles: [{}] });
  return { entity, config };
}

describe('shape validators written by the compile step', () => {
  const module = written();
  const files = corpus();

  it.each(['entity', 'config'] as const)(
    'check %s files exactly as the schema compiled at build time does',
    (shape) => {
      const reference = compileShapeValidator(shape);
      const documents = files[shape];
      expect(documents.length).toBeGreaterThan(shape === 'entity' ? 50 : 10);
      let invalid = 0;
      for (const data of documents) {
        const valid = module[shape](data);
        expect(valid).toBe(reference(data));
        expect(module[shape].errors ?? null).toEqual(reference.errors ?? null);
        if (!valid) invalid++;
      }
      // The corpus holds broken files, so the errors were compared too.
      expect(invalid).toBeGreaterThan(3);
    },
  );

  it('name what they were made from', () => {
    expect(module.schemasHash).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(written().schemasHash).toBe(module.schemasHash);
  });
});
