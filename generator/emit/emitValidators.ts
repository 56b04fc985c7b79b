import AjvModule from 'ajv';
import standaloneModule from 'ajv/dist/standalone/index.js';
import {
  endpointValidatorName,
  incrementableFields,
  serverSetFields,
  writableFields,
} from '../../runtime/model/entityRoutes.js';
import type { AppModel, EntityModel } from '../../runtime/model/types.js';
import { type JsonSchema, objectSchema, valueSchema } from '../../runtime/model/valueSchema.js';
import { GENERATED_HEADER } from './header.js';

const Ajv = AjvModule.default;
const standaloneCode = standaloneModule.default;
const quietLogger = { log() {}, warn() {}, error: console.error };
/**
 * AJV hands each compiled function's code to `process` before evaluating it. The build only
 * writes that code out (standalone takes it from the compilation, not from this text), so the
 * evaluated text is a stand-in: parsing the real code would cost V8 a fifth of the emission.
 */
const NOT_EVALUATED = 'return function validate() { throw new Error("build-time stand-in, never run"); }';

/** The request bodies each entity validates, by export name. */
export function bodySchemas(entity: EntityModel): Record<'create' | 'update' | 'increment', JsonSchema> {
  const writable = writableFields(entity);
  const numeric = incrementableFields(entity);
  return {
    create: objectSchema(writable, 'create'),
    update: objectSchema(writable, 'update'),
    increment: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: Object.fromEntries(numeric.map((f) => [f.name, valueSchema({ type: f.type })])),
    },
  };
}

/**
 * The read-only fields, which only the server sets (before-hooks may): each optional, checked
 * for its type and constraints. A hook's result is checked by this for those fields and by the
 * create or update body schema for the rest.
 */
export function serverSetSchema(entity: EntityModel): JsonSchema {
  return objectSchema(
    serverSetFields(entity).map((f) => ({ ...f, required: false })),
    'update',
  );
}

/** The body schema of each custom endpoint that reads a body, by validator export name. */
export function endpointBodySchemas(entity: EntityModel): Record<string, JsonSchema> {
  return Object.fromEntries(
    (entity.endpoints ?? [])
      .filter((endpoint) => ['POST', 'PUT', 'PATCH'].includes(endpoint.method))
      .map((endpoint) => [endpointValidatorName(endpoint.name), objectSchema(endpoint.body ?? [], 'create')]),
  );
}

/** What an entity's validators are compiled from: each schema by its export name. */
export function validatorSchemas(entity: EntityModel): Record<string, JsonSchema> {
  return { ...bodySchemas(entity), serverSet: serverSetSchema(entity), ...endpointBodySchemas(entity) };
}

/**
 * generated/validators/<plural>.js: AJV standalone code, so the server compiles nothing at start.
 * A fresh AJV per entity keeps the generated names local: editing one entity changes one file.
 */
export function emitValidators(model: AppModel): Map<string, string> {
  const files = new Map<string, string>();
  for (const entity of model.entities) for (const [path, text] of entityValidators(entity)) files.set(path, text);
  return files;
}

/** One entity's validator files, compiled from its schemas. */
export function entityValidators(entity: EntityModel): [string, string][] {
  return entityValidatorFiles(entity.plural, validatorSchemas(entity));
}

/** The paths of one entity's validator files: its code, its declarations. */
export function validatorPaths(plural: string): [string, string] {
  return [`validators/${plural}.js`, `validators/${plural}.d.ts`];
}

/** The two files of one entity's validators (its code, its declarations), from its schemas. */
export function entityValidatorFiles(plural: string, schemas: Record<string, JsonSchema>): [string, string][] {
  const ajv = new Ajv({
    code: { source: true, esm: true, lines: true, optimize: false, process: () => NOT_EVALUATED },
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    unicode: false,
    logger: quietLogger,
    // Body schemas are machine-made: skip compiling the meta-schema for each fresh instance.
    meta: false,
    validateSchema: false,
  });
  for (const [name, schema] of Object.entries(schemas)) ajv.addSchema({ $id: `${plural}/${name}`, ...schema });
  const code = standaloneCode(ajv, Object.fromEntries(Object.keys(schemas).map((name) => [name, `${plural}/${name}`])));
  const endpointDeclarations = Object.keys(schemas)
    .filter((name) => name.startsWith('endpoint_'))
    .flatMap((name) => [
      `/** Body of the custom endpoint ${name.slice('endpoint_'.length)}. */`,
      `export declare const ${name}: CompiledValidator;`,
    ]);
  const [codePath, declarationsPath] = validatorPaths(plural);
  return [
    [codePath, [GENERATED_HEADER, code.trimEnd(), 'export const bulkItem = create;', ''].join('\n')],
    [
      declarationsPath,
      [
        GENERATED_HEADER,
        "import type { CompiledValidator } from 'entigen/runtime';",
        '',
        `/** Body of POST /${plural}. */`,
        'export declare const create: CompiledValidator;',
        `/** Body of PATCH /${plural}/{id}. */`,
        'export declare const update: CompiledValidator;',
        `/** One item of POST /${plural}/bulk. */`,
        'export declare const bulkItem: CompiledValidator;',
        `/** Body of PATCH /${plural}/{id}/increment. */`,
        'export declare const increment: CompiledValidator;',
        '/** The read-only fields a before-hook may set. */',
        'export declare const serverSet: CompiledValidator;',
        ...endpointDeclarations,
        '',
      ].join('\n'),
    ],
  ];
}
