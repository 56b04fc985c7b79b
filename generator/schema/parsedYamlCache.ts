import { createRequire } from 'node:module';
import { deserialize, serialize } from 'node:v8';
import { hashOf, KeptEntries } from '../keptEntries.js';

/** Bumped whenever loadYaml reads a text into other data than before (its options, its checks). */
const FORMAT = 2;
const FILE = 'parsed-yaml.bin';

/**
 * What each entity and config file's text read into, from earlier builds, by the text's hash: a
 * large model's files take the `yaml` package some 2 ms each to parse before its code is warm,
 * most of a build's model phase, and a rebuild usually changes few of them. Only texts that parsed
 * without a problem are kept; a value's position is found by parsing that one file when a check
 * asks for it. Each value is serialized on its own with V8's serializer, which keeps what JSON
 * would not (.inf, .nan, -0, an anchor's value shared by its aliases), so each read gets objects
 * of its own. Anything amiss with the file reads as an empty cache.
 */
export class ParsedYamlCache {
  private constructor(private readonly entries: KeptEntries<Uint8Array>) {}

  /** The cache kept in `dir`; without a folder, one that remembers nothing. */
  static open(dir: string | undefined): ParsedYamlCache {
    return new ParsedYamlCache(KeptEntries.open(dir, FILE, `${FORMAT} yaml ${yamlVersion()}`));
  }

  /** What `text` read into before (objects of its own), or `missing`. */
  get<T>(text: string, missing: T): unknown | T {
    const bytes = this.entries.get(hashOf(text));
    if (!bytes) return missing;
    try {
      return deserialize(bytes);
    } catch {
      return missing;
    }
  }

  /** Remembers what `text` read into, as it is now (later changes to `data` are not kept). */
  set(text: string, data: unknown): void {
    this.entries.set(hashOf(text), serialize(data));
  }

  /** Keeps the texts of this build (those of files since changed or removed go). Never throws. */
  save(): void {
    this.entries.save();
  }
}

let version: string | undefined;
function yamlVersion(): string {
  version ??= (createRequire(import.meta.url)('yaml/package.json') as { version: string }).version;
  return version;
}
