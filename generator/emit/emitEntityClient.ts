import { API_PREFIX, type EntityRouteDeclaration, everyEntityRoute } from '../../runtime/api/entityRoutes.js';
import type { EntityModel } from '../../runtime/model/types.js';
import type { JsonSchema } from '../../runtime/model/valueSchema.js';
import type { newWriter } from './header.js';
import type { SchemaTypes } from './schemaTypes.js';

type Writer = ReturnType<typeof newWriter>;

/**
 * The entity the generic client is written for: its components are the class's type parameters
 * (`#/components/schemas/Record_Create` is `Create`), and it has every kind of route.
 */
const GENERIC: EntityModel = {
  name: 'Record_',
  plural: '',
  label: 'records',
  fields: [],
  filters: [],
  trash: { retention: '30d' },
} as unknown as EntityModel;

/** The generic entity's components, as the class's type parameters. */
export const ENTITY_TYPE_PARAMETERS: Record<string, string> = {
  Record_: 'Record_',
  Record_Create: 'Create',
  Record_Update: 'Update',
  Record_Increment: 'Partial<Record<Numeric, number>>',
  Record_List: '{ data: ListResult<Record_> }',
  Record_Aggregate: '{ data: AggregateResult<Record_, Aggregate> }',
  Version: 'Version<Record_>',
};

/** The query grammars read by parsers of their own, as the client types them (templates/client/core.ts). */
const GRAMMARS = {
  list: 'ListParams<Field> & Filters',
  aggregate: 'AggregateParams<Aggregate> & Filters',
  populate: '{ populate?: string[] | { paths: string[]; depth?: number }; locale?: string }',
} as const;

/**
 * `EntityClient`: one method per kind of entity route, from the route declarations; the
 * generated types of each entity pick the methods its routes have.
 */
export function emitEntityClient(writer: Writer, types: SchemaTypes): void {
  writer.blankLine();
  writer.writeLine(
    '/** Every generic operation of one entity, from the route declarations; the generated types pick those the entity has. */',
  );
  writer
    .write(
      'export class EntityClient<Record_, Create, Update, Filters, Field extends string, Numeric extends string, Aggregate extends AggregateFields = AggregateFields>',
    )
    .block(() => {
      writer.writeLine('constructor(private readonly transport: Transport, private readonly plural: string) {}');
      writer.blankLine();
      writer
        .write('private path(...parts: (string | number)[]): string')
        .block(() => writer.writeLine("return ['/api/v1', this.plural, ...parts.map(segment)].join('/');"));
      for (const route of everyEntityRoute(GENERIC).filter((r) => r.client)) {
        writer.blankLine();
        const [doc, signature, body] = entityMethod(route, types);
        writer.writeLine(doc);
        writer.write(signature).block(() => writer.write(body));
      }
    });
}

/** [doc comment, signature, body] of one route's method. */
function entityMethod(route: EntityRouteDeclaration, types: SchemaTypes): string[] {
  const client = route.client!;
  const segments = route.path.slice(`${API_PREFIX}/`.length).split('/').filter(Boolean);
  const pathNames = segments.filter((s) => s.startsWith('{')).map((s) => s.slice(1, -1));
  const params = pathNames.map((name) => `${name}: ${route.params?.[name] ? types.of(route.params[name]) : 'string'}`);
  const init: string[] = [];
  const before: string[] = [];
  if (route.grammar) {
    const type = GRAMMARS[route.grammar.parser];
    params.push(`params: ${type} = {} as ${type}`);
    init.push('query: params as Query');
  }
  const body = route.body as JsonSchema | undefined;
  if (body && client.bodyField) {
    const field = client.bodyField;
    const optional = !((body.required as string[] | undefined) ?? []).includes(field);
    params.push(`${field}${optional ? '?' : ''}: ${types.of((body.properties as Record<string, JsonSchema>)[field])}`);
    init.push(optional ? `body: ${field} === undefined ? {} : { ${field} }` : `body: { ${field} }`);
  } else if (body) {
    params.push(`body: ${types.of(body)}`);
    init.push('body');
  }
  const query = route.query as JsonSchema | undefined;
  const queryNames = Object.keys((query?.properties as object | undefined) ?? {});
  if (query && queryNames.length > 0 && !route.grammar) {
    const properties = query.properties as Record<string, JsonSchema>;
    const required = new Set((query.required as string[] | undefined) ?? []);
    if (client.positional) {
      for (const name of queryNames)
        params.push(`${name}${required.has(name) ? '' : '?'}: ${types.of(properties[name])}`);
      init.push(`query: { ${queryNames.join(', ')} }`);
    } else if (client.options) {
      // A write's own parameters ride with its request options (`remove(id, { permanent: true })`).
      params.push(`options?: RequestOptions & ${types.of({ ...query, additionalProperties: false })}`);
      before.push(`const { ${queryNames.join(', ')}, ...rest } = options ?? {};`);
      init.push(`query: { ${queryNames.join(', ')} }`, 'options: rest');
    } else {
      params.push(`query: ${types.of(query)} = {}`);
      init.push('query');
    }
  }
  if (client.options && !init.includes('options: rest')) {
    params.push('options?: RequestOptions');
    init.push('options');
  }
  const response = route.response as JsonSchema;
  const answered = client.unwrap && response.properties ? (response.properties as { data: JsonSchema }).data : response;
  const answer = unwrapped(types.of(answered), client.unwrap);
  const path = `this.path(${segments.map((s) => (s.startsWith('{') ? s.slice(1, -1) : `'${s}'`)).join(', ')})`;
  const call = `this.transport.${client.unwrap ? 'data' : 'request'}<${answer}>('${route.method}', ${path}${init.length ? `, { ${init.join(', ')} }` : ''})`;
  const doc = `/** ${(client.doc ?? `${route.summary}.`).replace(/Record_/g, 'record')} */`;
  return [doc, `${client.name}(${params.join(', ')}): Promise<${answer}>`, [...before, `return ${call};`].join('\n')];
}

/** An envelope component's type (`{ data: ListResult<Record_> }`) answered unwrapped: its data's. */
function unwrapped(type: string, unwrap: boolean | undefined): string {
  const envelope = /^\{ data: (.*) \}$/.exec(type);
  return unwrap && envelope ? envelope[1] : type;
}
