import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import type { EntityModel } from '../model/types.js';
import type { Doc } from '../store/types.js';

/** A stored record as a response shows it: hidden fields left out, encrypted values masked. */
export function presentRecord(entity: EntityModel, doc: Doc): Doc {
  const out: Record<string, unknown> = {};
  for (const field of entity.fields) {
    if (field.hidden || !(field.name in doc)) continue;
    const value = doc[field.name];
    out[field.name] =
      field.type === 'encryptedKey' && value !== null && value !== undefined ? ENCRYPTED_PLACEHOLDER : value;
  }
  return out as Doc;
}
