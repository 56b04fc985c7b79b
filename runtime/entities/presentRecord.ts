import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import type { EntityModel } from '../model/types.js';
import { fieldPicker, type Picker } from '../store/common/compiledLiteral.js';
import type { Doc } from '../store/types.js';

/** Per entity: its shown fields, picked as one literal from a whole record. */
const presenters = new WeakMap<EntityModel, Picker>();

/** A stored record as a response shows it: hidden fields left out, encrypted values masked. */
export function presentRecord(entity: EntityModel, doc: Doc): Doc {
  let present = presenters.get(entity);
  if (!present) {
    const shown = entity.fields.filter((field) => !field.hidden);
    const encrypted = new Set(shown.filter((field) => field.type === 'encryptedKey').map((field) => field.name));
    present = fieldPicker(
      shown.map((field) => field.name),
      encrypted,
      ENCRYPTED_PLACEHOLDER,
    );
    presenters.set(entity, present);
  }
  return present(doc) as Doc;
}
