import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';

/** Bumped whenever loadYaml reads a text into other data than before (its options, its checks). */
const FORMAT = 1;
const FILE = 'parsed-yaml.bin';

interface Stored {
  format: number;
  yaml: string;
  /** Text hash -> the data, serialized on its own: each read gets objects of its own. */
  entries: [string, Uint8Array][];
}

/**
 * What each entity and config file's text read into, from earlier builds, by the text's hash: a
 * large model's files take the `yaml` package some 2 ms each to parse before its code is warm,
 * most of a build's model phase, and a rebuild usually changes few of them. Only texts that parsed
 * without a problem are kept; a value's position is found by parsing that one file when a check
 * asks for it. Kept with V8's serializer, which keeps what JSON would not (.inf, .nan, -0, an
 * anchor's value shared by its aliases). Anything amiss with the file reads as an empty cache.
 */
export class ParsedYamlCache {
  private readonly used = new Map<string, Uint8Array>();
  private added = false;

  private constructor(
    private readonly file: string | undefined,
    private readonly earlier: Map<string, Uint8Array>,
  ) {}

  /** The cache kept in `dir`; without a folder, one that remembers nothing. */
  static open(dir: string | undefined): ParsedYamlCache {
    if (!dir) return new ParsedYamlCache(undefined, new Map());
    const file = join(dir, FILE);
    try {
      const stored = deserialize(readFileSync(file)) as Stored;
      if (stored.format === FORMAT && stored.yaml === yamlVersion() && Array.isArray(stored.entries))
        return new ParsedYamlCache(file, new Map(stored.entries));
    } catch {
      // None yet, or not one this version wrote: start empty.
    }
    return new ParsedYamlCache(file, new Map());
  }

  /** What `text` read into before (objects of its own), or `missing`. */
  get<T>(text: string, missing: T): unknown | T {
    const key = hashOf(text);
    const bytes = this.used.get(key) ?? this.earlier.get(key);
    if (!bytes) return missing;
    this.used.set(key, bytes);
    try {
      return deserialize(bytes);
    } catch {
      return missing;
    }
  }

  /** Remembers what `text` read into, as it is now (later changes to `data` are not kept). */
  set(text: string, data: unknown): void {
    this.used.set(hashOf(text), serialize(data));
    this.added = true;
  }

  /** Keeps the texts of this build (those of files since changed or removed go). Never throws. */
  save(): void {
    if (!this.file || (!this.added && this.used.size === this.earlier.size)) return;
    try {
      const stored: Stored = { format: FORMAT, yaml: yamlVersion(), entries: [...this.used] };
      const temporary = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temporary, serialize(stored));
      renameSync(temporary, this.file);
    } catch {
      // A read-only folder: the next build parses again.
    }
  }
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

let version: string | undefined;
function yamlVersion(): string {
  version ??= (createRequire(import.meta.url)('yaml/package.json') as { version: string }).version;
  return version;
}
