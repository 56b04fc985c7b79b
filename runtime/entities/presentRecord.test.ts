import { describe, expect, it } from 'vitest';
import { ENCRYPTED_PLACEHOLDER } from '../crypto/fieldCipher.js';
import type { EntityModel } from '../model/types.js';
import { presentRecord } from './presentRecord.js';

const entity = (fields: { name: string; hidden?: boolean; type?: string }[]) =>
  ({ plural: 'things', fields: fields.map((f) => ({ type: 'string', ...f })) }) as unknown as EntityModel;

describe('presentRecord', () => {
  const model = entity([
    { name: 'id' },
    { name: 'title' },
    { name: 'password', hidden: true },
    { name: 'apiSecret', type: 'encryptedKey' },
    { name: 'note' },
  ]);

  it('leaves out hidden fields and what no field declares, masks encrypted values, keeps field order', () => {
    const shown = presentRecord(model, {
      note: null,
      id: 'a',
      title: 'T',
      password: 'p',
      apiSecret: 'ciphertext',
      internal: 1,
    } as never);
    expect(shown).toEqual({ id: 'a', title: 'T', apiSecret: ENCRYPTED_PLACEHOLDER, note: null });
    expect(Object.keys(shown)).toEqual(['id', 'title', 'apiSecret', 'note']);
    expect(presentRecord(model, { id: 'b', title: null, apiSecret: null, note: undefined } as never)).toEqual({
      id: 'b',
      title: null,
      apiSecret: null,
      note: undefined,
    });
  });

  it('shows only the fields a record holds (a select)', () => {
    const shown = presentRecord(model, { id: 'a', apiSecret: 'x' } as never);
    expect(shown).toEqual({ id: 'a', apiSecret: ENCRYPTED_PLACEHOLDER });
    expect(Object.keys(shown)).toEqual(['id', 'apiSecret']);
  });

  it('presents entities whose field names cannot be compiled the same way', () => {
    const odd = entity([{ name: 'id' }, { name: 'a-b' }, { name: 'secret', hidden: true }]);
    expect(presentRecord(odd, { id: 'x', 'a-b': 2, secret: 's' } as never)).toEqual({ id: 'x', 'a-b': 2 });
  });
});
