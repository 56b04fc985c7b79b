import type { Readable } from 'node:stream';

/** Part of a stored file: bytes `start` to `end`, both included (HTTP's Range). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredFile {
  body: Readable;
  /** The whole file's size, whatever part `body` holds. */
  size: number;
}

/**
 * Where media files live: a folder on this machine (`local`, the default) or an S3-compatible
 * bucket (`s3`). Keys are relative paths (`<asset id>/file.png`); every file of one asset (the
 * original and its thumbnails) sits under the asset's id, so one `removeAll(id)` removes them all.
 */
export interface FileStorage {
  readonly driver: 'local' | 's3';
  /** Streams `body` in under `key`; nothing is held in memory beyond a bounded buffer. */
  put(key: string, body: Readable, contentType: string): Promise<void>;
  /** The file, or the part `range` names; undefined when there is no such file. */
  get(key: string, range?: ByteRange): Promise<StoredFile | undefined>;
  /** The size of the file, or undefined when there is none. */
  size(key: string): Promise<number | undefined>;
  remove(key: string): Promise<void>;
  /** Removes every file under `<prefix>/`. */
  removeAll(prefix: string): Promise<void>;
  /** Every key under `prefix` (all keys when empty), in no particular order. */
  list(prefix?: string): AsyncIterable<string>;
  close(): Promise<void>;
}

/** The key of an asset's original file: its id, then `file` with the upload's extension. */
export function originalKey(id: string, filename: string): string {
  const ext = /\.[a-z0-9]{1,10}$/i.exec(filename)?.[0].toLowerCase() ?? '';
  return `${id}/file${ext}`;
}

/** The id a key belongs to (its first segment), for keys this module made. */
export function assetIdOf(key: string): string | undefined {
  return /^([0-9a-f]{24})\//.exec(key)?.[1];
}
