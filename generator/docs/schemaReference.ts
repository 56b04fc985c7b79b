/**
 * Reference tables written from a JSON Schema (the entity file's, the config's): one row per
 * key, with its type, default, description and an example, so the documentation lists exactly
 * the keys the build accepts.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema and OpenAPI documents are walked by key.
type Schema = Record<string, any>;

export interface SchemaRow {
  /** The key's path: `history.keep`, `fields.<name>.type`, `auth.oidc[].issuer`. */
  path: string;
  type: string;
  required: boolean;
  default?: unknown;
  description: string;
  example?: unknown;
}

/** The rows of a schema, parents before their children; `$defs` named in `sections` are left for their own tables. */
export function schemaRows(
  root: Schema,
  node: Schema = root,
  prefix = '',
  sections: readonly string[] = [],
): SchemaRow[] {
  const rows: SchemaRow[] = [];
  const required = new Set<string>(node.required ?? []);
  for (const [key, child] of Object.entries<Schema>(node.properties ?? {})) {
    const path = `${prefix}${key}`;
    const resolved = resolve(root, child);
    rows.push({
      path,
      type: typeOf(root, child),
      required: required.has(key),
      default: child.default,
      description: child.description ?? '',
      example: child.examples?.[0],
    });
    const section = sectionOf(child, sections) ?? sectionOf(child.additionalProperties, sections);
    if (section) continue;
    if (resolved.properties) rows.push(...schemaRows(root, resolved, `${path}.`, sections));
    const values = resolved.additionalProperties;
    if (values && typeof values === 'object' && !sectionOf(values, sections)) {
      const inner = resolve(root, values);
      if (inner.properties) rows.push(...schemaRows(root, inner, `${path}.<name>.`, sections));
    }
    const items = resolved.items && resolve(root, resolved.items);
    if (items?.properties) rows.push(...schemaRows(root, items, `${path}[].`, sections));
  }
  return rows;
}

/** A Markdown table of rows. */
export function rowsTable(rows: readonly SchemaRow[]): string {
  const lines = ['| key | type | default | description | example |', '|---|---|---|---|---|'];
  for (const row of rows) {
    const key = `\`${row.path}\`${row.required ? ' (required)' : ''}`;
    const fallback = row.default === undefined ? '' : code(row.default);
    const example = row.example === undefined ? '' : code(row.example);
    lines.push(`| ${[key, cell(row.type), fallback, cell(row.description), example].join(' | ')} |`);
  }
  return lines.join('\n');
}

function sectionOf(node: Schema | undefined, sections: readonly string[]): string | undefined {
  const ref = typeof node?.$ref === 'string' ? node.$ref.replace('#/$defs/', '') : undefined;
  return ref && sections.includes(ref) ? ref : undefined;
}

function resolve(root: Schema, node: Schema): Schema {
  if (typeof node?.$ref === 'string') return resolve(root, root.$defs[node.$ref.replace('#/$defs/', '')]);
  return node ?? {};
}

/** The type as a reader says it: `string`, `integer`, `one of a, b`, `map of field`, `string[]`, `duration`. */
export function typeOf(root: Schema, node: Schema): string {
  if (typeof node.$ref === 'string') {
    const name = node.$ref.replace('#/$defs/', '');
    const target = root.$defs[name];
    if (target.enum) return typeOf(root, target);
    return name;
  }
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return `one of ${node.enum.map((v: unknown) => `\`${v}\``).join(', ')}`;
  if (node.anyOf) return [...new Set(node.anyOf.map((n: Schema) => typeOf(root, n)))].join(' or ');
  if (node.type === 'array') return node.items ? `${typeOf(root, node.items)}[]` : 'array';
  if (node.type === 'object' && node.additionalProperties && typeof node.additionalProperties === 'object')
    return `map of ${typeOf(root, node.additionalProperties)}`;
  if (Array.isArray(node.type)) return node.type.join(' or ');
  return node.type ?? 'any value';
}

function code(value: unknown): string {
  return `\`${cell(typeof value === 'string' ? value : JSON.stringify(value))}\``;
}

/** Text safe in a Markdown table cell: `<` outside code spans would open an HTML tag. */
export function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/</g, '&lt;')))
    .join('')
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ');
}
