import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { Diagnostic } from '../diagnostics.js';
import type { PathSegment, SourceFile } from './loadYaml.js';
import { configSchema, entitySchema } from './schemas.js';

const Ajv = AjvModule.default;

type Shape = 'entity' | 'config';

const validators = new Map<Shape, ValidateFunction>();

function validatorFor(shape: Shape): ValidateFunction {
  let validate = validators.get(shape);
  if (!validate) {
    // The schemas are static files checked against the meta-schema by schemas.test.ts, not at every build.
    const ajv = new Ajv({ allErrors: true, strict: true, verbose: true, allowUnionTypes: true, validateSchema: false });
    ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
    validate = ajv.compile(shape === 'entity' ? entitySchema : configSchema);
    validators.set(shape, validate);
  }
  return validate;
}

/** Checks a file against its JSON Schema and turns AJV's errors into positioned diagnostics. */
export function checkShape(source: SourceFile, shape: Shape): Diagnostic[] {
  const validate = validatorFor(shape);
  if (validate(source.data)) return [];
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const error of validate.errors ?? []) {
    // Branch failures of an anyOf are summed up by the anyOf's own error.
    if (error.schemaPath.includes('/anyOf/')) continue;
    if (error.keyword === 'propertyNames') continue;
    const diagnostic = toDiagnostic(source, error);
    const key = `${diagnostic.path}\u0000${diagnostic.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(diagnostic);
  }
  return out;
}

function toDiagnostic(source: SourceFile, error: ErrorObject): Diagnostic {
  const path = splitPointer(error.instancePath);
  const custom = (error.parentSchema as Record<string, unknown> | undefined)?.['x-message'];
  if (error.propertyName !== undefined) {
    const keyPath = [...path, error.propertyName];
    return source.diagnostic(keyPath, typeof custom === 'string' ? custom : (error.message ?? 'invalid name'), 'key');
  }
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = (error.params as { additionalProperty: string }).additionalProperty;
      const allowed = Object.keys((error.parentSchema as { properties?: object }).properties ?? {});
      // Field and value schemas are reached through $ref, so their schemaPath does not name them.
      const what = allowed.includes('type') && allowed.includes('ref') ? 'option' : 'key';
      return source.diagnostic([...path, name], `unknown ${what}; allowed: ${allowed.join(', ')}`, 'key');
    }
    case 'required': {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      return source.diagnostic(path, `missing required key "${missing}"`);
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
      return source.diagnostic(path, `must be one of ${allowed.join(', ')}`);
    }
    case 'uniqueItems': {
      const { i, j } = error.params as { i: number; j: number };
      return source.diagnostic([...path, i], `duplicate of item ${j}`);
    }
    default:
      return source.diagnostic(path, typeof custom === 'string' ? custom : (error.message ?? 'is invalid'));
  }
}

function splitPointer(pointer: string): PathSegment[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}
