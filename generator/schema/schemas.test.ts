import AjvModule from 'ajv';
import { describe, expect, it } from 'vitest';
import { configSchema, entitySchema } from './schemas.js';

const Ajv = AjvModule.default;

describe('entity and config JSON Schemas', () => {
  it.each([
    ['entity', entitySchema],
    ['config', configSchema],
  ])('the %s schema is valid draft-07 and compiles in strict mode', (_name, schema) => {
    const ajv = new Ajv({ strict: true, allowUnionTypes: true });
    ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
    expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
    expect(() => ajv.compile(schema)).not.toThrow();
  });

  it('lists every field type and option of the spec', () => {
    const defs = (entitySchema as { $defs: Record<string, { enum?: string[]; properties?: object }> }).$defs;
    expect(defs.type.enum).toEqual([
      'string',
      'int',
      'float',
      'boolean',
      'enum',
      'objectId',
      'isoDate',
      'array',
      'object',
      'url',
      'any',
      'encryptedKey',
    ]);
    for (const option of [
      'required',
      'optional',
      'unique',
      'default',
      'search',
      'values',
      'ref',
      'trackChanges',
      'hidden',
      'readOnly',
    ]) {
      expect(Object.keys(defs.field.properties!)).toContain(option);
    }
  });
});
