import type { FieldView } from '../access/fieldAccess.js';
import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import type { EntityModel } from '../model/types.js';
import { fieldPicker, type Picker } from '../store/common/compiledLiteral.js';
import type { Doc } from '../store/types.js';

/** Per entity: its shown fields, picked as one literal from a whole record. */
const plain = new WeakMap<EntityModel, Picker>();
/** Per entity, by the fields a caller may not see (joined): the same, without those. */
const presenters = new WeakMap<EntityModel, Map<string, Picker>>();
/** The same by the set itself: a caller's view (fieldView) keeps its sets, asked once per record. */
const bySet = new WeakMap<ReadonlySet<string>, Picker>();

function presenter(entity: EntityModel, unseen: ReadonlySet<string> | undefined): Picker {
  if (!unseen) {
    let present = plain.get(entity);
    if (!present) {
      present = picker(entity, undefined);
      plain.set(entity, present);
    }
    return present;
  }
  const same = bySet.get(unseen);
  if (same) return same;
  let byUnseen = presenters.get(entity);
  if (!byUnseen) {
    byUnseen = new Map();
    presenters.set(entity, byUnseen);
  }
  const key = [...unseen].sort().join('\u0000');
  let present = byUnseen.get(key);
  if (!present) {
    present = picker(entity, unseen);
    byUnseen.set(key, present);
  }
  bySet.set(unseen, present);
  return present;
}

function picker(entity: EntityModel, unseen: ReadonlySet<string> | undefined): Picker {
  const shown = entity.fields.filter((field) => !field.hidden && !unseen?.has(field.name));
  const encrypted = new Set(shown.filter((field) => field.type === 'encryptedKey').map((field) => field.name));
  return fieldPicker(
    shown.map((field) => field.name),
    encrypted,
    ENCRYPTED_PLACEHOLDER,
  );
}

/**
 * A stored record as a response shows it: hidden fields left out, encrypted values masked, and,
 * with the caller's `view`, the fields under `access:` the caller may not see on this record left
 * out (the key absent, not null). `owned`: the record whose owner counts as `owner`, when `doc`
 * is a past state of it.
 */
export function presentRecord(entity: EntityModel, doc: Doc, view?: FieldView, owned: Doc = doc): Doc {
  if (!view) return presenter(entity, undefined)(doc) as Doc;
  const owns = view.ownerOnly.size > 0 && view.userId !== undefined && owned.ownerId === view.userId;
  return presenter(entity, owns ? view.hidden : view.unseen)(doc) as Doc;
}
