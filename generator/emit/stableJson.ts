/** JSON with object keys sorted at every depth and a final newline: same value, same bytes. */
export function stableJson(value: unknown): string {
  return `${JSON.stringify(value, inKeyOrder, 2)}\n`;
}

/**
 * Each object as it is serialized: itself when its keys are in order already, otherwise a shallow
 * copy in order. The copies die as soon as they are written, so a document of many megabytes (the
 * OpenAPI document of a large model) is never held twice.
 */
function inKeyOrder(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1] < keys[i];
  if (sorted) return value;
  const out: Record<string, unknown> = {};
  for (const key of keys.sort()) out[key] = (value as Record<string, unknown>)[key];
  return out;
}
