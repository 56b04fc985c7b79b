import type { AnyRoute } from '../../runtime/api/route.js';
import type { JsonSchema } from '../../runtime/model/valueSchema.js';
import type { newWriter } from './header.js';
import type { SchemaTypes } from './schemaTypes.js';

type Writer = ReturnType<typeof newWriter>;

const GROUP_DOCS: Record<string, string> = {
  auth: 'Sign-in and account operations; a successful login or register makes the client use the session.',
  apiKeys: 'Your API keys: create (the token is shown once), list, revoke.',
  users: 'Accounts: administrators list, create and change them; a user changes its own displayName.',
  roles: 'Roles and the permissions they grant (administrators).',
};

/** A member of the client made from the route declarations: a group (`auth`) or a method (`search`). */
export interface FixedMember {
  /** The line of the Client interface. */
  declaration: string;
  /** The line of createClient's object. */
  construction: string;
}

/**
 * The typed client of the runtime's own routes, from their declarations: the shapes they answer,
 * one class per group (`client.auth`, `client.users`) and the methods of the client itself.
 */
export function emitFixedClient(writer: Writer, routes: readonly AnyRoute[], types: SchemaTypes): FixedMember[] {
  const groups = new Map<string, { route: AnyRoute; text: string[] }[]>();
  for (const route of routes) {
    if (!route.client) continue;
    const methods = groups.get(route.client.group) ?? [];
    methods.push({ route, text: method(route, types) });
    groups.set(route.client.group, methods);
  }
  for (const methods of groups.values())
    methods.sort((a, b) => a.route.client!.name.localeCompare(b.route.client!.name));
  const members: FixedMember[] = [];
  writer.blankLine();
  writer.writeLine("// ---- The runtime's own routes (accounts, keys, search), from their declarations.");
  for (const [group, methods] of groups) {
    if (group === 'root') {
      for (const { route, text } of methods) {
        const [doc, signature, call] = text;
        members.push({
          declaration: `${doc}\n${signature};`,
          construction: `${route.client!.name}: ${call},`,
        });
      }
      continue;
    }
    const className = `${group[0].toUpperCase()}${group.slice(1)}Client`;
    writer.blankLine();
    if (GROUP_DOCS[group]) writer.writeLine(`/** ${GROUP_DOCS[group]} */`);
    writer.write(`export class ${className}`).block(() => {
      writer.writeLine('constructor(private readonly transport: Transport) {}');
      for (const { route, text } of methods) {
        writer.blankLine();
        const [doc, signature, , body] = text;
        writer.writeLine(doc);
        writer.write(`${route.client!.session ? 'async ' : ''}${signature}`).block(() => writer.write(body));
      }
    });
    members.push({ declaration: `${group}: ${className};`, construction: `${group}: new ${className}(transport),` });
  }
  return members;
}

/** [doc comment, signature, arrow call for a member of the client itself, method body]. */
function method(route: AnyRoute, types: SchemaTypes): string[] {
  const client = route.client!;
  const pathNames = [...route.path.matchAll(/\{([A-Za-z]+)\}/g)].map(([, name]) => name);
  const params: string[] = pathNames.map((name) => `${name}: string`);
  const init: string[] = [];
  if (route.body) {
    const body = route.body as JsonSchema;
    const optional = route.bodyOptional || !((body.required as string[] | undefined)?.length ?? 0);
    params.push(`body: ${types.of(body)}${optional ? ' = {}' : ''}`);
    init.push('body');
  }
  const query = route.query as JsonSchema | undefined;
  const queryNames = Object.keys((query?.properties as object | undefined) ?? {});
  if (query && queryNames.length > 0) {
    const required = new Set((query.required as string[] | undefined) ?? []);
    const properties = query.properties as Record<string, JsonSchema>;
    if (client.positional) {
      for (const name of queryNames)
        params.push(`${name}${required.has(name) ? '' : '?'}: ${types.of(properties[name])}`);
      init.push(`query: { ${queryNames.join(', ')} }`);
    } else {
      params.push(`query: ${types.of(query)}${required.size === 0 ? ' = {}' : ''}`);
      init.push('query');
    }
  }
  const answered = [route.response, ...successResponses(route)]
    .filter((schema): schema is JsonSchema => schema !== undefined)
    .map((schema) => (client.unwrap ? ((schema.properties as Record<string, JsonSchema>).data ?? schema) : schema))
    .map((schema) => types.of(schema));
  const answer = answered.reduce((all, one) => `OneOf<${all}, ${one}>`);
  const path = route.path.includes('{')
    ? `\`${route.path.replace(/\{([A-Za-z]+)\}/g, (_whole, name: string) => `\${segment(${name})}`)}\``
    : `'${route.path}'`;
  const call = `this.transport.${client.unwrap ? 'data' : 'request'}<${answer}>('${route.method}', ${path}${init.length ? `, { ${init.join(', ')} }` : ''})`;
  const doc = `/** ${(client.doc ?? `${route.summary}.`).replace(/\*\//g, '*\\/')} */`;
  const session = client.session;
  const signature = `${client.name}(${params.join(', ')}): Promise<${answer}>`;
  const body = session
    ? [
        `const answer = await ${call};`,
        session === 'use'
          ? "if (typeof answer.token === 'string') this.transport.useSession(answer.token);"
          : 'this.transport.setCredential(undefined);',
        'return answer;',
      ].join('\n')
    : `return ${call};`;
  const arrow = `(${params.map((p) => p.replace(/[?]?:.*$/, '')).join(', ')}) => ${call.replace('this.transport', 'transport')}`;
  return [doc, signature, arrow, body];
}

/**
 * The shapes the printed types named, each declared once by its name; `generic` names those
 * declared with a type parameter (`Version<Record_>`: a version's snapshot is the entity's record).
 */
export function emitNamedShapes(
  writer: Writer,
  types: SchemaTypes,
  names: ReadonlyMap<object, string>,
  generic: Record<string, { parameter: string; replace: [string, string] }> = {},
): void {
  const schemaOf = new Map([...names].map(([schema, name]) => [name, schema as JsonSchema]));
  const bodies = new Map<string, string>();
  // A Set's walk visits what is added during it: the shapes a shape names are declared too.
  for (const name of types.used) bodies.set(name, types.of(schemaOf.get(name), false));
  writer.blankLine();
  writer.writeLine('// ---- The shapes the routes answer, from their declarations.');
  for (const [name, text] of [...bodies].sort(([a], [b]) => a.localeCompare(b))) {
    const schema = schemaOf.get(name)!;
    const typed = generic[name];
    writer.blankLine();
    if (typeof schema.description === 'string') writer.writeLine(`/** ${schema.description}. */`);
    writer.writeLine(
      typed
        ? `export type ${name}<${typed.parameter} = unknown> = ${text.replace(...typed.replace)};`
        : `export type ${name} = ${text};`,
    );
  }
}

/** The JSON answers of other 2xx statuses (login's 202 challenge). */
function successResponses(route: AnyRoute): JsonSchema[] {
  return Object.entries(route.responses ?? {})
    .filter(([status]) => status.startsWith('2'))
    .flatMap(([, response]) => {
      const content = (response as { content?: Record<string, { schema?: JsonSchema }> }).content;
      const schema = content?.['application/json']?.schema;
      return schema ? [schema] : [];
    });
}
