import { createRequire } from 'node:module';
import AjvModule, { type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { Diagnostic } from '../diagnostics.js';
import { hashOf } from '../keptEntries.js';
import type { PathSegment, SourceFile } from './loadYaml.js';
import { nearestWord } from './nearestWord.js';
import { configSchema, entitySchema } from './schemas.js';

const Ajv = AjvModule.default;
const standaloneCode = standaloneModule.default;
const require = createRequire(import.meta.url);

type Shape = 'entity' | 'config';

// The schemas are static files checked against the meta-schema by schemas.test.ts, not at every build.
const OPTIONS: Options = { allErrors: true, strict: true, verbose: true, allowUnionTypes: true, validateSchema: false };
const SCHEMAS: Record<Shape, object> = { entity: entitySchema, config: configSchema };
/** The file beside this module that the package's compile step writes (scripts/compileShapeValidators.mjs). */
export const SHAPE_VALIDATORS_FILE = 'shapeValidators.cjs';

function shapeAjv(code?: Options['code']): AjvModule.default {
  const ajv = new Ajv({ ...OPTIONS, ...(code ? { code } : {}) });
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  return ajv;
}

/** What the validators are made from: the schemas, the options and AJV's version. */
function schemasHash(): string {
  const { version } = require('ajv/package.json') as { version: string };
  return hashOf(JSON.stringify([SCHEMAS, OPTIONS, version]));
}

/**
 * Both shape validators as one CommonJS module of AJV standalone code, with the hash of what they
 * were made from. Compiling the schemas at every build took the build's thread some 100 ms (the
 * config schema alone 60 ms); the package's compile step writes this module instead.
 */
export function shapeValidatorsModule(): string {
  const ajv = shapeAjv({ source: true });
  const ids: Record<string, string> = {};
  for (const [shape, schema] of Object.entries(SCHEMAS)) {
    ajv.addSchema(schema);
    ids[shape] = (schema as { $id: string }).$id;
  }
  return `${standaloneCode(ajv, ids)}\nexports.schemasHash = ${JSON.stringify(schemasHash())};\n`;
}

/** A shape's validator compiled here from its schema, as when no written module matches. */
export function compileShapeValidator(shape: Shape): ValidateFunction {
  return shapeAjv().compile(SCHEMAS[shape]);
}

const validators = new Map<Shape, ValidateFunction>();
let written: Partial<Record<Shape, ValidateFunction>> | undefined;

/** The module the compile step wrote, when it was made from these schemas, options and AJV; else nothing. */
function precompiled(): Partial<Record<Shape, ValidateFunction>> {
  if (!written) {
    written = {};
    try {
      const module = require(`./${SHAPE_VALIDATORS_FILE}`) as Record<Shape, ValidateFunction> & { schemasHash: string };
      if (module.schemasHash === schemasHash()) written = module;
    } catch {
      // Run from the sources, or compiled without the step: the schemas are compiled here.
    }
  }
  return written;
}

function validatorFor(shape: Shape): ValidateFunction {
  let validate = validators.get(shape);
  if (!validate) {
    validate = precompiled()[shape] ?? compileShapeValidator(shape);
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
      // `unknown option; did you mean \`required\`? allowed: ...` when a word is near.
      const hint = didYouMean(name, allowed);
      return source.diagnostic(
        [...path, name],
        `unknown ${what}${hint ? `${hint} allowed` : '; allowed'}: ${allowed.join(', ')}`,
        'key',
      );
    }
    case 'required': {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      return source.diagnostic(path, `missing required key "${missing}"`);
    }
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
      const hint = typeof error.data === 'string' ? didYouMean(error.data, allowed.map(String)) : '';
      return source.diagnostic(path, `must be one of ${allowed.join(', ')}${hint}`);
    }
    case 'uniqueItems': {
      const { i, j } = error.params as { i: number; j: number };
      return source.diagnostic([...path, i], `duplicate of item ${j}`);
    }
    default:
      return source.diagnostic(path, typeof custom === 'string' ? custom : (error.message ?? 'is invalid'));
  }
}

/** `; did you mean \`enum\`?` when an allowed word is near `word`, else nothing. */
function didYouMean(word: string, allowed: readonly string[]): string {
  const meant = nearestWord(word, allowed);
  return meant === undefined ? '' : `; did you mean \`${meant}\`?`;
}

function splitPointer(pointer: string): PathSegment[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}
