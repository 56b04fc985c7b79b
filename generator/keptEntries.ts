import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';

interface Stored<V> {
  /** What wrote the file: entries of another writer (another format, another library version) are not read. */
  stamp: string;
  entries: [string, V][];
}

/** The hash the build caches key their entries by. */
export function hashOf(input: string | Uint8Array): string {
  return createHash('sha256').update(input).digest('base64');
}

/**
 * What earlier builds made from their inputs, by a hash of the input: one file in the cache
 * folder, read whole at the start of a build and written again with the entries this build used
 * (those of inputs since changed or removed go). Kept with V8's serializer. A file that is missing,
 * damaged or of another `stamp` reads as empty; one that cannot be written is left as it was.
 */
export class KeptEntries<V> {
  private readonly used = new Map<string, V>();
  private added = false;

  private constructor(
    private readonly file: string | undefined,
    private readonly stamp: string,
    private readonly earlier: Map<string, V>,
  ) {}

  /** The entries kept as `name` in `dir`; without a folder, a store that remembers nothing. */
  static open<V>(dir: string | undefined, name: string, stamp: string): KeptEntries<V> {
    if (!dir) return new KeptEntries<V>(undefined, stamp, new Map());
    const file = join(dir, name);
    try {
      const stored = deserialize(readFileSync(file)) as Stored<V>;
      if (stored.stamp === stamp && Array.isArray(stored.entries))
        return new KeptEntries(file, stamp, new Map(stored.entries));
    } catch {
      // None yet, or not one this version wrote: start empty.
    }
    return new KeptEntries<V>(file, stamp, new Map());
  }

  /** Entries read from the file (before this build added any). */
  get size(): number {
    return this.earlier.size;
  }

  get(key: string): V | undefined {
    const value = this.used.get(key) ?? this.earlier.get(key);
    if (value !== undefined) this.used.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.used.set(key, value);
    this.added = true;
  }

  /** Keeps the entries this build used. Never throws. */
  save(): void {
    if (!this.file || (!this.added && this.used.size === this.earlier.size)) return;
    try {
      const stored: Stored<V> = { stamp: this.stamp, entries: [...this.used] };
      const temporary = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temporary, serialize(stored));
      renameSync(temporary, this.file);
    } catch {
      // A read-only folder: the next build makes them again.
    }
  }
}
