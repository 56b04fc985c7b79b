import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange, FileStorage, StoredFile } from './fileStorage.js';

/**
 * Media files in a folder of this machine (`uploads.dir`). Files are written under a temporary
 * name and renamed when complete, so a reader never sees half a file. Records of earlier versions
 * hold absolute paths inside the folder; those are read and removed as they are.
 */
export class LocalStorage implements FileStorage {
  readonly driver = 'local' as const;
  private readonly root: string;

  /** Modes of the folders and files it makes: group-readable media, or the owner's alone (backups). */
  private readonly modes: { dir: number; file: number };

  constructor(dir: string, { ownerOnly = false }: { ownerOnly?: boolean } = {}) {
    this.root = normalize(join(dir, sep));
    this.modes = ownerOnly ? { dir: 0o700, file: 0o600 } : { dir: 0o777, file: 0o640 };
  }

  /** The path of a key, never outside the folder. */
  private path(key: string): string {
    const path = normalize(isAbsolute(key) ? key : join(this.root, key));
    if (!path.startsWith(this.root)) throw new Error(`the storage key ${JSON.stringify(key)} leaves the upload folder`);
    return path;
  }

  async put(key: string, body: Readable, _contentType?: string): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true, mode: this.modes.dir });
    const partial = `${path}.partial-${process.pid}-${Date.now()}`;
    try {
      await pipeline(body, createWriteStream(partial, { mode: this.modes.file }));
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<StoredFile | undefined> {
    const path = this.path(key);
    const size = await this.size(key);
    if (size === undefined) return undefined;
    return { body: createReadStream(path, range ?? {}), size };
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const found = await stat(this.path(key));
      return found.isFile() ? found.size : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async removeAll(prefix: string): Promise<void> {
    await rm(this.path(prefix), { recursive: true, force: true });
  }

  async *list(prefix = ''): AsyncIterable<string> {
    const start = this.path(prefix);
    let entries: string[];
    try {
      entries = (await readdir(start, { recursive: true })) as string[];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const path = join(start, entry);
      if (path.includes('.partial-')) continue;
      if ((await stat(path)).isFile()) yield relative(this.root, path).split(sep).join('/');
    }
  }

  async close(): Promise<void> {}
}
