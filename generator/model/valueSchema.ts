import {
  DATE_MACRO_PATTERN,
  ISO_DATE_PATTERN,
  OBJECT_ID_MACRO_PATTERN,
  OBJECT_ID_PATTERN,
  URL_PATTERN,
} from '../../runtime/model/patterns.js';
import type { FieldModel, ValueModel } from '../../runtime/model/types.js';

export type JsonSchema = Record<string, unknown>;

/** JSON Schema of one value as a request body may carry it; `nullable` lets an optional field be cleared. */
export function valueSchema(value: ValueModel, nullable = false): JsonSchema {
  const schema = baseSchema(value);
  if (!nullable || value.type === 'any') return schema;
  if (Array.isArray(schema.enum)) return { ...schema, type: [schema.type, 'null'], enum: [...schema.enum, null] };
  return { ...schema, type: [schema.type, 'null'] };
}

function baseSchema(value: ValueModel): JsonSchema {
  switch (value.type) {
    case 'string':
    case 'encryptedKey':
      return { type: 'string' };
    case 'int':
      // A safe integer: every store keeps it exactly, and JSON numbers beyond it lose digits.
      return { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
    case 'float':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'enum':
      return { type: 'string', enum: (value.values ?? []).map((v) => v.key) };
    case 'objectId':
      return { type: 'string', pattern: `${OBJECT_ID_PATTERN}|${OBJECT_ID_MACRO_PATTERN}` };
    case 'isoDate':
      return { type: 'string', pattern: `${ISO_DATE_PATTERN}|${DATE_MACRO_PATTERN}` };
    case 'url':
      return { type: 'string', pattern: URL_PATTERN };
    case 'array':
      return { type: 'array', items: valueSchema(value.items ?? { type: 'any' }) };
    case 'object':
      return value.properties ? objectSchema(value.properties, 'create') : { type: 'object' };
    case 'any':
      return {};
  }
}

/** A strict object of the given fields; `update` makes every field optional. */
export function objectSchema(fields: FieldModel[], mode: 'create' | 'update'): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const f of fields) {
    properties[f.name] = valueSchema(f, !f.required);
    if (mode === 'create' && f.required && f.default === undefined) required.push(f.name);
  }
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}
