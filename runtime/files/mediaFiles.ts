import { isAbsolute, resolve } from 'node:path';
import type { UploadsConfig } from '../config/runtimeConfig.js';
import type { FileStorage } from './fileStorage.js';
import { LocalStorage } from './localStorage.js';
import { S3Storage } from './s3Storage.js';
import { Thumbnails } from './thumbnails.js';

/** The media feature's files: where they live, their thumbnails, and the bounds of an upload. */
export interface MediaFiles {
  storage: FileStorage;
  thumbnails: Thumbnails;
  /** The thumbnail sizes a request may ask for (`200x200`). */
  sizes: readonly string[];
  maxBytes: number;
}

/** The storage uploads.driver names: the folder (relative to the project) or the bucket. */
export function openFileStorage(config: UploadsConfig, root: string): FileStorage {
  if (config.driver === 's3' && config.s3) return new S3Storage(config.s3);
  return new LocalStorage(isAbsolute(config.dir) ? config.dir : resolve(root, config.dir));
}

export function mediaFiles(config: UploadsConfig, root: string): MediaFiles {
  const storage = openFileStorage(config, root);
  return { storage, thumbnails: new Thumbnails(storage), sizes: config.thumbnails.sizes, maxBytes: config.maxBytes };
}
