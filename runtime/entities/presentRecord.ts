import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import type { EntityModel } from '../model/types.js';
import { compileLiteral, holdsAll, plainNames } from '../store/common/compiledLiteral.js';
import type { Doc } from '../store/types.js';

type Presenter = (doc: Doc) => Doc;

/** Per entity: the literal for records that hold every shown field (null: names that cannot be compiled). */
const presenters = new WeakMap<EntityModel, { shown: readonly string[]; present: Presenter } | null>();

/** A stored record as a response shows it: hidden fields left out, encrypted values masked. */
export function presentRecord(entity: EntityModel, doc: Doc): Doc {
  const compiled = presenterOf(entity);
  if (compiled && holdsAll(doc, compiled.shown)) return compiled.present(doc);
  // A record read with a select, or an entity whose names cannot be compiled.
  const out: Record<string, unknown> = {};
  for (const field of entity.fields) {
    if (field.hidden || !(field.name in doc)) continue;
    const value = doc[field.name];
    out[field.name] =
      field.type === 'encryptedKey' && value !== null && value !== undefined ? ENCRYPTED_PLACEHOLDER : value;
  }
  return out as Doc;
}

function presenterOf(entity: EntityModel): { shown: readonly string[]; present: Presenter } | null {
  let compiled = presenters.get(entity);
  if (compiled === undefined) {
    const fields = entity.fields.filter((field) => !field.hidden);
    const shown = fields.map((field) => field.name);
    compiled = plainNames(shown)
      ? {
          shown,
          present: compileLiteral<Doc, Doc>(
            shown,
            (name, i) => {
              const value = `source[${JSON.stringify(name)}]`;
              return fields[i].type === 'encryptedKey' ? `(${value} == null ? ${value} : placeholder)` : value;
            },
            { placeholder: ENCRYPTED_PLACEHOLDER },
          ),
        }
      : null;
    presenters.set(entity, compiled);
  }
  return compiled;
}
