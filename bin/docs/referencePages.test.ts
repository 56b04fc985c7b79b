import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { schemaRows } from '../../generator/docs/schemaReference.js';
import { configSchema, entitySchema } from '../../generator/schema/schemas.js';
import { ERROR_CODES } from '../../runtime/errors/apiError.js';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import { ENVIRONMENT_VARIABLES } from '../../runtime/server/environment.js';
import { entigenProgram } from '../program.js';
import { referencePages } from './referencePages.js';

const page = (path: string) => readFileSync(join(packageRoot, path), 'utf8');
// biome-ignore lint/suspicious/noExplicitAny: JSON Schema and OpenAPI documents are walked by key.
type Schema = Record<string, any>;

describe('the reference pages', () => {
  it('are what the sources write (npm run docs:reference)', () => {
    for (const [path, text] of referencePages()) expect(page(path), path).toBe(text);
  });

  it('give every key of the entity file and the config a described entry', () => {
    const entity = entitySchema as Schema;
    const entityPage = page('docs/reference/entity-file.md');
    const rows = [
      ...schemaRows(entity, entity, '', ['field']),
      ...schemaRows(entity, entity.$defs.field, '', ['field', 'value']),
      ...schemaRows(entity, entity.$defs.value, '', ['field', 'value']),
    ];
    for (const row of rows) {
      expect(row.description, row.path).not.toBe('');
      expect(entityPage).toContain(`| \`${row.path}\``);
    }
    const configPage = page('docs/reference/config.md');
    for (const row of schemaRows(configSchema as Schema)) {
      expect(row.description, row.path).not.toBe('');
      expect(configPage).toContain(`| \`${row.path}\``);
    }
  });

  it('give every CLI command and option, environment variable and error code an entry', () => {
    const cli = page('docs/reference/cli.md');
    for (const command of entigenProgram().commands) {
      expect(cli).toContain(`### \`entigen ${command.name()}\``);
      for (const option of command.options as Option[]) expect(cli).toContain(`| \`${option.flags}\``);
    }
    const environment = page('docs/reference/environment.md');
    for (const variable of ENVIRONMENT_VARIABLES) expect(environment).toContain(`| \`${variable.name}\``);
    const errors = page('docs/reference/errors.md');
    for (const code of Object.keys(ERROR_CODES)) expect(errors).toContain(`| \`${code}\``);
  });
});
