import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AppModel } from '../../runtime/model/types.js';
import { modelFromInputs } from '../build.js';
import { packageEntityFiles } from '../readInputs.js';
import { emitValidators, validatorSchemas } from './emitValidators.js';
import { emitValidatorsInParallel } from './emitValidatorsInParallel.js';
import { openValidatorCache, validatorCacheKey } from './validatorCache.js';

const entity = (plural: string, fields: string) =>
  `version: 1\nname: ${plural[0].toUpperCase()}${plural.slice(1, -1)}\nplural: ${plural}\nfields:\n${fields}`;

function modelOf(files: Record<string, string>): AppModel {
  return modelFromInputs({
    entityFiles: [
      ...packageEntityFiles('builtin', 'builtin'),
      ...Object.entries(files).map(([plural, text]) => ({
        file: `entities/${plural}.yaml`,
        text,
        origin: 'app' as const,
      })),
    ],
  });
}

/** One build's use of the cache: open, emit, save. */
async function emitWith(dir: string, model: AppModel) {
  const cache = openValidatorCache(dir);
  const files = await emitValidatorsInParallel(model, undefined, undefined, undefined, cache);
  cache.save();
  return files;
}

const posts = entity('posts', '  headline: { type: string, required: true, maxLength: 20 }\n');
const notes = entity('notes', '  body: { type: string }\n');

describe('the validator cache', () => {
  it('gives a later build the same files, and compiles again only the entity that changed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-validator-cache-'));
    const model = modelOf({ posts, notes });
    const first = await emitWith(dir, model);
    expect(first).toEqual(emitValidators(model));

    // A stand-in for the notes' kept code shows which files come from the cache.
    const cache = openValidatorCache(dir);
    const notesEntity = model.entities.find((e) => e.plural === 'notes')!;
    const notesKey = validatorCacheKey('notes', validatorSchemas(notesEntity));
    expect(cache.get(notesKey)?.map(([path]) => path)).toEqual(['validators/notes.js', 'validators/notes.d.ts']);
    cache.set(notesKey, [
      ['validators/notes.js', 'kept'],
      ['validators/notes.d.ts', 'kept'],
    ]);
    cache.save();

    const edited = modelOf({ posts: posts.replace('maxLength: 20', 'maxLength: 30'), notes });
    const second = await emitWith(dir, edited);
    expect(second.get('validators/notes.js')).toBe('kept');
    expect(second.get('validators/posts.js')).toBe(emitValidators(edited).get('validators/posts.js'));
    expect(second.get('validators/posts.js')).not.toBe(first.get('validators/posts.js'));
    expect(second.get('validators/posts.js')).toContain('30');
  });

  it('keys schemas apart that JSON would not tell apart', () => {
    const key = (maximum: number) => validatorCacheKey('posts', { create: { type: 'number', maximum } });
    expect(key(Infinity)).not.toBe(key(-Infinity));
    expect(key(Infinity)).not.toBe(key(Number.NaN));
    expect(key(Infinity)).toBe(key(Infinity));
    expect(validatorCacheKey('posts', {})).not.toBe(validatorCacheKey('notes', {}));
  });

  it('keeps only the entities of the last build, and reads a damaged file as empty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-validator-cache-'));
    await emitWith(dir, modelOf({ posts, notes }));
    expect(openValidatorCache(dir).size).toBeGreaterThan(2);
    const withoutNotes = modelOf({ posts });
    await emitWith(dir, withoutNotes);
    expect(openValidatorCache(dir).size).toBe(withoutNotes.entities.length);

    const [file] = readdirSync(dir).filter((name) => name.startsWith('validators'));
    writeFileSync(join(dir, file), 'not what V8 serializes');
    expect(openValidatorCache(dir).size).toBe(0);
    expect(await emitWith(dir, withoutNotes)).toEqual(emitValidators(withoutNotes));
  });
});
