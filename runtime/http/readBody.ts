import { newDetails, validationError } from '../errors/apiError.js';

type FieldSpec =
  | { type: 'string'; required?: boolean; max?: number; min?: number }
  | { type: 'stringArray'; required?: boolean; maxItems?: number }
  | { type: 'boolean'; required?: boolean }
  | { type: 'object'; required?: boolean }
  | { type: 'enum'; values: readonly string[]; required?: boolean };

export type BodySpec = Record<string, FieldSpec>;

/**
 * Strict reading of the runtime's own fixed request bodies (auth, roles, API keys): every
 * unknown, missing or mistyped field is reported at once in `details`.
 */
export function readBody(body: unknown, spec: BodySpec): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw validationError({ body: 'must be a JSON object' });
  const input = body as Record<string, unknown>;
  const details = newDetails();
  for (const key of Object.keys(input)) if (!Object.hasOwn(spec, key)) details[key] = 'is not allowed';
  for (const [key, field] of Object.entries(spec)) {
    const value = input[key];
    if (value === undefined || value === null) {
      if (field.required) details[key] = 'is required';
      continue;
    }
    const problem = check(value, field);
    if (problem) details[key] = problem;
  }
  if (Object.keys(details).length > 0) throw validationError(details);
  return input;
}

function check(value: unknown, field: FieldSpec): string | undefined {
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if (field.min !== undefined && value.trim().length < field.min)
        return field.min === 1 ? 'must not be empty' : `must be at least ${field.min} characters`;
      if (value.length > (field.max ?? 10_000)) return `must be at most ${field.max ?? 10_000} characters`;
      return undefined;
    case 'stringArray':
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return 'must be an array of strings';
      if (value.length > (field.maxItems ?? 1000)) return `must have at most ${field.maxItems ?? 1000} items`;
      return undefined;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'object':
      return typeof value === 'object' && !Array.isArray(value) ? undefined : 'must be an object';
    case 'enum':
      return typeof value === 'string' && field.values.includes(value)
        ? undefined
        : `must be one of ${field.values.join(', ')}`;
  }
}
