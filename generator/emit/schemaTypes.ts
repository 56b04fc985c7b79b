import type { JsonSchema } from '../../runtime/model/valueSchema.js';

/**
 * TypeScript type text of a JSON Schema (the subset the route declarations use): named schemas
 * by their name, `$ref`s by `refs`, objects, lists, unions, literals.
 */
export class SchemaTypes {
  /** The named schemas a printed type used, for the client to declare. */
  readonly used = new Set<string>();

  constructor(
    private readonly names: ReadonlyMap<object, string>,
    private readonly refs: (component: string) => string,
  ) {}

  of(schema: JsonSchema | undefined, named = true): string {
    if (!schema) return 'unknown';
    const name = named ? this.names.get(schema) : undefined;
    if (name) {
      this.used.add(name);
      return name;
    }
    if (typeof schema.$ref === 'string') return this.refs(schema.$ref.split('/').pop()!);
    if ('const' in schema) return JSON.stringify(schema.const);
    if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
    if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf))
      return ((schema.anyOf ?? schema.oneOf) as JsonSchema[]).map((part) => this.of(part)).join(' | ');
    if (Array.isArray(schema.allOf))
      return (schema.allOf as JsonSchema[]).map((part) => this.wrapped(part)).join(' & ');
    const types = ([] as string[]).concat((schema.type as string | string[] | undefined) ?? []);
    if (types.length > 1) return types.map((type) => this.of({ ...schema, type }, false)).join(' | ');
    switch (types[0]) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        return `${this.wrapped(schema.items as JsonSchema | undefined)}[]`;
      case 'object':
        return this.object(schema);
      default:
        return 'unknown';
    }
  }

  private wrapped(schema: JsonSchema | undefined): string {
    const text = this.of(schema);
    return /[|&]/.test(text) && !/^\{[\s\S]*\}$/.test(text) ? `(${text})` : text;
  }

  private object(schema: JsonSchema): string {
    const properties = Object.entries((schema.properties as Record<string, JsonSchema> | undefined) ?? {});
    const open = schema.additionalProperties === true || schema.additionalProperties === undefined;
    const values = schema.additionalProperties;
    // A dictionary: any keys, each value of one schema.
    if (properties.length === 0 && typeof values === 'object' && values !== null)
      return `Record<string, ${this.of(values as JsonSchema)}>`;
    if (properties.length === 0) return open ? 'Record<string, unknown>' : 'Record<string, never>';
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const members = properties.map(([key, property]) => {
      const doc = typeof property.description === 'string' ? `/** ${property.description} */ ` : '';
      return `${doc}${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}${required.has(key) ? '' : '?'}: ${this.of(property)}`;
    });
    if (schema.additionalProperties === true) members.push('[key: string]: unknown');
    return `{ ${members.join('; ')} }`;
  }
}
