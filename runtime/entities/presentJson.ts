import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import type { AppModel } from '../model/types.js';

/** Deeper than any answer a handler means to give: the rest is cut, not walked. */
const MAX_DEPTH = 64;

/** Field names the records of any entity must never show as stored: hidden ones, and encrypted ones. */
export interface MaskedNames {
  hidden: ReadonlySet<string>;
  encrypted: ReadonlySet<string>;
}

export function maskedNames(model: AppModel): MaskedNames {
  const hidden = new Set<string>();
  const encrypted = new Set<string>();
  for (const entity of model.entities)
    for (const field of entity.fields) {
      if (field.hidden) hidden.add(field.name);
      else if (field.type === 'encryptedKey') encrypted.add(field.name);
    }
  return { hidden, encrypted };
}

/**
 * The answer of a `response: json` endpoint as it goes out: a handler may return records read
 * through its repositories (as stored: hidden fields, ciphertext), whole or spread into objects
 * of its own, so every object in it is shown as presentRecord shows a record: no field named as
 * any entity's hidden field, and values of encrypted fields masked. A copy; the input is not changed.
 */
export function presentJson(
  value: unknown,
  names: MaskedNames,
  /** Objects already shown as records (by the handler's `present`): they go out as they are. */
  presented?: WeakSet<object>,
  depth = 0,
): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (presented?.has(value)) return value;
  if (depth >= MAX_DEPTH) return null;
  if (Array.isArray(value)) return value.map((item) => presentJson(item, names, presented, depth + 1));
  if (value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (names.hidden.has(key)) continue;
    out[key] =
      names.encrypted.has(key) && item !== null && item !== undefined
        ? ENCRYPTED_PLACEHOLDER
        : presentJson(item, names, presented, depth + 1);
  }
  return out;
}
