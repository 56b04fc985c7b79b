import {
  DATE_MACRO_PATTERN,
  FORMAT_PATTERNS,
  ISO_DATE_PATTERN,
  OBJECT_ID_MACRO_PATTERN,
  OBJECT_ID_PATTERN,
  URL_PATTERN,
} from './patterns.js';
import type { FieldModel, ValueModel } from './types.js';

export type JsonSchema = Record<string, unknown>;

/** JSON Schema of one value as a request body may carry it; `nullable` lets an optional field be cleared. */
export function valueSchema(value: ValueModel, nullable = false): JsonSchema {
  const schema = withConstraints(baseSchema(value), value);
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

/**
 * The declared constraints as JSON Schema keywords. A format and a pattern together become
 * allOf (a schema holds one pattern); int bounds stay inside the safe-integer range.
 */
function withConstraints(schema: JsonSchema, value: ValueModel): JsonSchema {
  const out = { ...schema };
  if (value.min !== undefined) out.minimum = Math.max(value.min, (schema.minimum as number | undefined) ?? -Infinity);
  if (value.max !== undefined) out.maximum = Math.min(value.max, (schema.maximum as number | undefined) ?? Infinity);
  if (value.minLength !== undefined) out.minLength = value.minLength;
  if (value.maxLength !== undefined) out.maxLength = value.maxLength;
  if (value.minItems !== undefined) out.minItems = value.minItems;
  if (value.maxItems !== undefined) out.maxItems = value.maxItems;
  const patterns = [
    ...(value.format ? [FORMAT_PATTERNS[value.format].pattern] : []),
    ...(value.pattern !== undefined ? [value.pattern] : []),
  ];
  if (patterns.length > 0 && out.pattern !== undefined) patterns.unshift(out.pattern as string);
  if (patterns.length === 1) out.pattern = patterns[0];
  else if (patterns.length > 1) {
    delete out.pattern;
    out.allOf = patterns.map((pattern) => ({ pattern }));
  }
  return out;
}

/** A strict object of the given fields; `update` makes every field optional. */
export function objectSchema(fields: FieldModel[], mode: 'create' | 'update'): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const f of fields) {
    properties[f.name] = f.localized ? localizedSchema(f, mode) : valueSchema(f, !f.required);
    if (mode === 'create' && f.required && f.default === undefined) required.push(f.name);
  }
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}

/**
 * A localized field in a body: an object keyed by locale (a plain value is keyed by the request's
 * locale before validation). Each locale's value is checked like the field's; a required field
 * needs its required locales on create and cannot clear them; an optional one may be cleared whole.
 */
function localizedSchema(field: FieldModel, mode: 'create' | 'update'): JsonSchema {
  const { locales, required } = field.localized!;
  const kept = field.required ? new Set(required) : new Set<string>();
  const schema: JsonSchema = {
    type: field.required ? 'object' : ['object', 'null'],
    additionalProperties: false,
    minProperties: 1,
    properties: Object.fromEntries(locales.map((locale) => [locale, valueSchema(field, !kept.has(locale))])),
  };
  if (mode === 'create' && field.required && field.default === undefined) schema.required = [...kept];
  return schema;
}
