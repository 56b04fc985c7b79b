import type { Static, StringOptions, TProperties, TSchema, TString } from '@sinclair/typebox';
import { NON_BLANK_PATTERN } from '../model/patterns.js';
import { Type } from './typebox.js';

// The building blocks of the route declarations. Every string a caller sends has a length bound and
// every list a size bound (test: runtime/api/declarations.test.ts).

export { Type };

/** A string of at most `maxLength` characters. */
export const Text = (maxLength: number, options: StringOptions = {}): TString => Type.String({ maxLength, ...options });

/** A string with something besides white space in it. */
export const NonBlank = (maxLength: number, options: StringOptions = {}): TString =>
  Type.String({ maxLength, pattern: NON_BLANK_PATTERN, ...options });

/** A list of at most `maxItems` strings of at most `maxLength` characters. */
export const Strings = (maxItems: number, maxLength: number) => Type.Array(Type.String({ maxLength }), { maxItems });

/** A request body: an object that refuses fields it does not name. */
export const Body = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });

/** `T` or null, as one JSON Schema type list (`["string", "null"]`). */
export const Nullable = <T extends TSchema & { type: string }>(schema: T) => {
  const { type, ...rest } = schema;
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
};

/** One of a few strings, as a JSON Schema `enum`. */
export const Enum = <const T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

/** An object of any keys, each value of one schema (JSON Schema `additionalProperties`). */
export const Dictionary = <T extends TSchema>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: values, ...options });

/** The `{ data }` envelope. */
export const Data = <T extends TSchema>(schema: T) => Type.Object({ data: schema });

/** A schema of the document's components (an entity's record, EntityMetadata). */
export const Component = <T = Record<string, unknown>>(name: string) =>
  Type.Unsafe<T>({ $ref: `#/components/schemas/${name}` });

/** Answers of free text: the string schema of a page, a stream or a file. */
export const Page = Type.String();

export const Success = Type.Object({ success: Type.Boolean() });
export const SuccessMessage = Type.Object({ success: Type.Boolean(), message: Type.String() });
