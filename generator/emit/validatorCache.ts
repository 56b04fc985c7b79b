import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { serialize } from 'node:v8';
import type { JsonSchema } from '../../runtime/model/valueSchema.js';
import { hashOf, KeptEntries } from '../keptEntries.js';
import { GENERATED_HEADER } from './header.js';

const FILE = 'validators.bin';

/**
 * Each entity's validator files from earlier builds, by a hash of what they are compiled from (its
 * plural and its schemas): AJV's code generation is the largest part of a large build (some 7 ms
 * an entity), and a rebuild usually changes few entities. The stamp holds AJV's version and the
 * text of the module that emits the files, so another AJV or other emission code compiles again.
 */
export type ValidatorCache = KeptEntries<[string, string][]>;

/** The cache kept in `dir`; without a folder, one that remembers nothing. */
export function openValidatorCache(dir: string | undefined): ValidatorCache {
  return KeptEntries.open(dir, FILE, emissionStamp());
}

/** Serialized by V8, not as JSON: a bound of .inf and one of -.inf must not share a key. */
export function validatorCacheKey(plural: string, schemas: Record<string, JsonSchema>): string {
  return hashOf(serialize([plural, schemas]));
}

let stamp: string | undefined;
function emissionStamp(): string {
  if (stamp === undefined) {
    try {
      const ajv = (createRequire(import.meta.url)('ajv/package.json') as { version: string }).version;
      const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
      const emitter = readFileSync(fileURLToPath(new URL(`./emitValidators${extension}`, import.meta.url)), 'utf8');
      stamp = `ajv ${ajv} ${hashOf(emitter + GENERATED_HEADER)}`;
    } catch {
      // The emitting code cannot be read: a stamp no file holds, so nothing kept is trusted.
      stamp = `unknown ${process.pid} ${Date.now()}`;
    }
  }
  return stamp;
}
