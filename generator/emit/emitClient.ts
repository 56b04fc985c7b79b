import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPONENTS } from '../../runtime/api/components.js';
import { entityRoutes, entityRouteTable } from '../../runtime/api/entityRoutes.js';
import { fixedRoutes, NAMED_SHAPES } from '../../runtime/api/index.js';
import { groupableFields, measurableFields } from '../../runtime/model/aggregateFields.js';
import { incrementableFields } from '../../runtime/model/entityRoutes.js';
import { operatorsFor } from '../../runtime/model/filterOperators.js';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import type { AppModel, EntityModel } from '../../runtime/model/types.js';
import { typeNamesOf } from '../model/typeNames.js';
import { ENTITY_TYPE_PARAMETERS, emitEntityClient } from './emitEntityClient.js';
import { emitFixedClient, emitNamedShapes } from './emitFixedClient.js';
import { tsType } from './emitTypes.js';
import { newWriter, quote } from './header.js';
import { SchemaTypes } from './schemaTypes.js';

export const CLIENT_FILE = 'client.ts';

/** The shapes the declarations name, and the components of the document (history, metadata). */
function namedShapes(): Map<object, string> {
  const names = new Map<object, string>(NAMED_SHAPES);
  const taken = new Set(names.values());
  for (const [name, schema] of Object.entries(COMPONENTS)) if (!taken.has(name)) names.set(schema, name);
  return names;
}

/** A `$ref` of the document: the generic entity client's type parameters, an entity's record, a named shape. */
function componentType(model: AppModel, component: string, names: Map<object, string>, types: SchemaTypes): string {
  const parameter = ENTITY_TYPE_PARAMETERS[component];
  if (parameter) {
    if (component === 'Version') types.used.add('Version');
    return parameter;
  }
  const entity = model.entities.find((e) => !e.internal && e.name === component);
  if (entity) return typeNamesOf(entity).record;
  if ([...names.values()].includes(component)) {
    types.used.add(component);
    return component;
  }
  return 'Record<string, unknown>';
}

/** Client members that are not entities; an entity with such a plural is reached as `<plural>Records`. */
const RESERVED = new Set(['auth', 'apiKeys', 'users', 'roles', 'search', 'setCredential', 'subscribe']);
const memberOf = (entity: EntityModel) => (RESERVED.has(entity.plural) ? `${entity.plural}Records` : entity.plural);

let core: string | undefined;
const clientCore = () => (core ??= readFileSync(join(packageRoot, 'templates', 'client', 'core.ts'), 'utf8'));

/**
 * generated/client.ts: a fetch-based client with no dependencies, usable in browsers and Node.
 * One typed method per operation an entity has, typed list parameters (its fields and filters),
 * typed errors (ApiRequestError), a session (cookie or token) or an API key.
 */
export function emitClient(model: AppModel): Map<string, string> {
  const entities = model.entities.filter((e) => !e.internal);
  const head = newWriter();
  head.writeLine(
    `import type { ${entities
      .flatMap((e) => Object.values(typeNamesOf(e)).filter((n): n is string => typeof n === 'string'))
      .sort()
      .join(', ')} } from './types.js';`,
  );
  head.blankLine();
  // The core is copied as it is: the writer would read its regular expressions as strings.
  const writer = newWriter({ header: false });
  const names = namedShapes();
  const types: SchemaTypes = new SchemaTypes(names, (component): string =>
    componentType(model, component, names, types),
  );
  const fixed = emitFixedClient(writer, fixedRoutes(model), types);
  emitEntityClient(writer, types);
  emitNamedShapes(writer, types, names, {
    Version: { parameter: 'Record_', replace: ['snapshot: unknown', 'snapshot: Record_'] },
  });
  const byPlural = new Map(model.entities.map((e) => [e.plural, e]));
  for (const entity of entities) emitEntityTypes(writer, entity, byPlural);
  const subscribable = entities.filter((e) => entityRouteTable(e).some(([, , route]) => route === 'list'));
  writer.blankLine();
  writer.writeLine('/** The events of each entity a realtime subscription can name. */');
  writer.write('export interface RealtimeEvents').block(() => {
    for (const entity of subscribable)
      writer.writeLine(
        `${entity.plural}: RealtimeRecordEvent<${quote(entity.plural)}, ${typeNamesOf(entity).record}>;`,
      );
  });
  const batchable = entities.filter((e) => entityRouteTable(e).length > 0);
  writer.blankLine();
  writer.writeLine(
    '/** The operations a batch may do, per entity: each makes a step the batch answers in its place. */',
  );
  writer.write('export interface BatchBuilder').block(() => {
    for (const entity of batchable) writer.writeLine(`${memberOf(entity)}: ${entity.name}Batch;`);
  });
  writer.blankLine();
  writer.writeLine('/** The typed client of this API. */');
  writer.write('export interface Client').block(() => {
    for (const member of fixed) writer.writeLine(member.declaration);
    writer.writeLine(
      '/** Changes to these entities that you may see, as they commit (GET /api/v1/realtime); reconnects and resumes by itself. */',
    );
    writer.writeLine(
      'subscribe<P extends keyof RealtimeEvents>(entities: P[], onEvent: (event: RealtimeEvents[P]) => void, options?: SubscribeOptions): Subscription;',
    );
    writer.writeLine(
      "/** Up to 100 writes across entities in one transaction, all or nothing (POST /api/v1/batch); answers each step's data, typed. */",
    );
    writer.writeLine(
      'batch<const T extends readonly BatchStep<unknown>[]>(build: (b: BatchBuilder) => T, options?: RequestOptions): Promise<BatchAnswers<T>>;',
    );
    writer.writeLine('/** Switches to a session token or API key (undefined: anonymous). */');
    writer.writeLine('setCredential(credential: string | undefined): void;');
    for (const entity of entities) writer.writeLine(`${memberOf(entity)}: ${entity.name}Client;`);
  });
  writer.blankLine();
  writer.write('export function createClient(options: ClientOptions): Client').block(() => {
    writer.writeLine('const transport = new Transport(options);');
    writer.write('return').inlineBlock(() => {
      for (const member of fixed) writer.writeLine(member.construction);
      writer.writeLine(
        'subscribe: (entities, onEvent, options) => subscribeRealtime(transport, entities, onEvent, options),',
      );
      writer.writeLine(
        `batch: (build, options) => runBatch(transport, (add): BatchBuilder => ({ ${batchable.map((e) => `${memberOf(e)}: new BatchEntity<${batchTypeArguments(e)}>(add, ${quote(e.plural)})`).join(', ')} }), build, options),`,
      );
      writer.writeLine('setCredential: (credential) => transport.setCredential(credential),');
      for (const entity of entities) writer.writeLine(`${memberOf(entity)}: ${entityClientExpression(entity)},`);
    });
    writer.write(';').newLine();
  });
  return new Map([[CLIENT_FILE, `${head.toString()}${clientCore().trimEnd()}\n${writer.toString()}`]]);
}

function emitEntityTypes(
  writer: ReturnType<typeof newWriter>,
  entity: EntityModel,
  byPlural: ReadonlyMap<string, EntityModel>,
): void {
  const names = typeNamesOf(entity);
  const fields = new Map(entity.fields.map((f) => [f.name, f]));
  writer.blankLine();
  writer.writeLine(`// ${entity.label} (/${entity.plural})`);
  writer.write(`export interface ${entity.name}Filters`).block(() => {
    for (const name of entity.filters) {
      const field = fields.get(name)!;
      const value = `NonNullable<${names.record}[${quote(name)}]>`;
      const scalar = field.type === 'array' ? `${value}[number]` : value;
      const operators = operatorsFor(field).map(quote).join(' | ');
      writer.writeLine(
        `${name}?: ${field.type === 'array' ? `${scalar} | ${value}` : value} | Pick<FilterOperators<${scalar}>, ${operators}>;`,
      );
    }
  });
  const visible = entity.fields.filter((f) => !f.hidden).map((f) => quote(f.name));
  writer.writeLine(`export type ${entity.name}Field = ${visible.join(' | ')};`);
  const numeric = numericUnion(entity);
  const methods = entityRoutes(entity, byPlural).flatMap((route) => (route.client ? [quote(route.client.name)] : []));
  const endpoints = entity.endpoints ?? [];
  const relations = entity.relations ?? [];
  const union = (names: string[]) => (names.length > 0 ? names.map(quote).join(' | ') : 'never');
  const groupable = groupableFields(entity);
  writer.writeLine(
    `export interface ${entity.name}AggregateFields { group: ${union(groupable.filter((f) => f.type !== 'isoDate').map((f) => f.name))}; date: ${union(groupable.filter((f) => f.type === 'isoDate').map((f) => f.name))}; number: ${union(measurableFields(entity, 'sum').map((f) => f.name))} }`,
  );
  writer.writeLine(
    `export type ${entity.name}Client = Pick<EntityClient<${names.record}, ${names.create}, ${names.update}, ${entity.name}Filters, ${entity.name}Field, ${numeric}, ${entity.name}AggregateFields>, ${methods.join(' | ')}>${endpoints.length > 0 ? ` & ${entity.name}EndpointClient` : ''}${relations.length > 0 ? ` & ${entity.name}RelationClient` : ''};`,
  );
  const batchMethods = [
    'create',
    'update',
    ...(numeric !== 'never' ? ['increment'] : []),
    ...(entity.ownership === 'owned' ? ['archive', 'restore'] : []),
    'remove',
    ...(endpoints.length > 0 ? ['endpoint'] : []),
  ];
  writer.writeLine(
    `export type ${entity.name}Batch = Pick<BatchEntity<${batchTypeArguments(entity)}>, ${batchMethods.map(quote).join(' | ')}>;`,
  );
  if (relations.length > 0) {
    writer.writeLine(
      `/** The reverse relations of ${entity.plural}: the related entity's list, narrowed to one record. */`,
    );
    writer.write(`export interface ${entity.name}RelationClient`).block(() => {
      for (const relation of relations) {
        const related = byPlural.get(relation.entity)!;
        writer.writeLine(`/** GET /api/v1/${entity.plural}/{id}/${relation.name} */`);
        writer.writeLine(
          `${relation.name}(id: string, params?: ListParams<${related.name}Field> & ${related.name}Filters): Promise<ListResult<${typeNamesOf(related).record}>>;`,
        );
      }
    });
  }
  if (endpoints.length === 0) return;
  writer.writeLine(`/** The custom endpoints of ${entity.plural}. */`);
  writer.write(`export interface ${entity.name}EndpointClient`).block(() => {
    for (const endpoint of endpoints) {
      const fields = (endpoint.body ?? []).map(
        (f) =>
          `${f.name}${f.required && f.default === undefined ? '' : '?'}: ${tsType(f)}${f.required || f.type === 'any' ? '' : ' | null'}`,
      );
      const params = [
        ...(endpoint.byId ? ['id: string'] : []),
        ...(readsBody(endpoint.method)
          ? [`body${fields.some((f) => !f.includes('?:')) ? '' : '?'}: { ${fields.join('; ')} }`]
          : []),
        'options?: RequestOptions',
      ];
      const answer = endpoint.response === 'record' ? names.record : 'unknown';
      writer.writeLine(`/** ${endpoint.method} /api/v1/${entity.plural}${endpoint.path} */`);
      writer.writeLine(`${endpoint.name}(${params.join(', ')}): Promise<${answer}>;`);
    }
  });
}

const readsBody = (method: string) => ['POST', 'PUT', 'PATCH'].includes(method);

/** The type arguments of an entity's BatchEntity: record, create, update, numeric fields, endpoints. */
function batchTypeArguments(entity: EntityModel): string {
  const names = typeNamesOf(entity);
  const endpoints = (entity.endpoints ?? []).map((e) => quote(e.name));
  return `${names.record}, ${names.create}, ${names.update}, ${numericUnion(entity)}, ${endpoints.join(' | ') || 'never'}`;
}

/** The entity's writable numeric fields as a union of names (`'views' | 'rating'`), or `never`. */
function numericUnion(entity: EntityModel): string {
  const names = incrementableFields(entity).map((f) => quote(f.name));
  return names.join(' | ') || 'never';
}

/** `new EntityClient(...)`, with the entity's custom endpoints as methods when it has some. */
function entityClientExpression(entity: EntityModel): string {
  const endpoints = entity.endpoints ?? [];
  const relations = entity.relations ?? [];
  if (endpoints.length === 0 && relations.length === 0) return `new EntityClient(transport, ${quote(entity.plural)})`;
  const names = typeNamesOf(entity);
  const typeArgs = `${names.record}, ${names.create}, ${names.update}, ${entity.name}Filters, ${entity.name}Field, ${numericUnion(entity)}`;
  const client = `new EntityClient<${typeArgs}>(transport, ${quote(entity.plural)})`;
  const methods = endpoints.map((endpoint) => {
    const params = [
      ...(endpoint.byId ? ['id: string'] : []),
      ...(readsBody(endpoint.method) ? ['body?: unknown'] : []),
      'options?: RequestOptions',
    ];
    const path = endpoint.byId
      ? `\`/api/v1/${entity.plural}/\${encodeURIComponent(id)}${endpoint.path.slice('/{id}'.length)}\``
      : quote(`/api/v1/${entity.plural}${endpoint.path}`);
    const init = `{ ${readsBody(endpoint.method) ? 'body: body ?? {}, ' : ''}options }`;
    const answer = endpoint.response === 'record' ? names.record : 'unknown';
    return `${endpoint.name}: (${params.join(', ')}) => transport.data<${answer}>(${quote(endpoint.method)}, ${path}, ${init})`;
  });
  for (const relation of relations) {
    methods.push(
      `${relation.name}: (id: string, params: object = {}) => transport.data<never>('GET', \`/api/v1/${entity.plural}/\${encodeURIComponent(id)}/${relation.name}\`, { query: params as Query })`,
    );
  }
  return `Object.assign(${client}, { ${methods.join(', ')} })`;
}
