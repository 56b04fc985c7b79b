import type { Readable } from 'node:stream';
import type sharpModule from 'sharp';
import { ApiError, validationError } from '../errors/apiError.js';
import type { ThumbnailFit } from '../model/thumbnails.js';
import type { FileStorage } from './fileStorage.js';

export interface ThumbnailSpec {
  width: number;
  height: number;
  fit: ThumbnailFit;
}

/** Images a thumbnail can be made of, and the format it is made in. */
const FORMATS: Record<string, { format: 'jpeg' | 'png' | 'webp'; type: string; ext: string }> = {
  'image/jpeg': { format: 'jpeg', type: 'image/jpeg', ext: 'jpg' },
  'image/png': { format: 'png', type: 'image/png', ext: 'png' },
  'image/webp': { format: 'webp', type: 'image/webp', ext: 'webp' },
  'image/gif': { format: 'png', type: 'image/png', ext: 'png' },
  'image/avif': { format: 'webp', type: 'image/webp', ext: 'webp' },
  'image/tiff': { format: 'png', type: 'image/png', ext: 'png' },
};
/**
 * sharp (libvips and its threads), loaded when the first thumbnail is made: a server that never
 * makes one never holds it. libvips' own cache of decoded images is off: it would keep memory this
 * server needs more elsewhere.
 */
let loading: Promise<typeof sharpModule> | undefined;
const loadSharp = () =>
  (loading ??= import('sharp').then(({ default: sharp }) => {
    sharp.cache(false);
    return sharp;
  }));

/** A decompression bomb stops here: 50 megapixels, about 7000 x 7000. */
const MAX_INPUT_PIXELS = 50_000_000;

/**
 * `?thumb=200x200&fit=cover`: one of the configured sizes (uploads.thumbnails.sizes), else 400
 * naming the sizes there are. Any size would let a caller fill the bucket with variants.
 */
export function thumbnailSpec(thumb: string | undefined, fit: string | undefined, sizes: readonly string[]) {
  if (thumb === undefined) {
    if (fit !== undefined) throw validationError({ fit: 'needs thumb' }, 'fit applies to thumbnails only');
    return undefined;
  }
  if (!sizes.includes(thumb))
    throw validationError(
      { thumb: sizes.length ? `must be one of ${sizes.join(', ')}` : 'thumbnails are turned off' },
      'No such thumbnail size',
    );
  const [width, height] = thumb.split('x').map(Number);
  return { width, height, fit: (fit ?? 'cover') as ThumbnailFit };
}

export function thumbnailType(mimeType: string): string | undefined {
  return FORMATS[mimeType]?.type;
}

/** Where a thumbnail is kept: beside its original, under the asset's id. */
export function thumbnailKey(id: string, mimeType: string, spec: ThumbnailSpec): string {
  return `${id}/thumb-${spec.width}x${spec.height}-${spec.fit}.${FORMATS[mimeType].ext}`;
}

/**
 * Makes thumbnails once and keeps them in the storage beside the original; later requests read
 * them back. Two requests for the same missing thumbnail in this instance share one making.
 */
export class Thumbnails {
  private readonly making = new Map<string, Promise<void>>();

  constructor(private readonly storage: FileStorage) {}

  /** The key of the thumbnail, made now if it is not stored yet. */
  async ensure(original: string, id: string, mimeType: string, spec: ThumbnailSpec): Promise<string> {
    const format = FORMATS[mimeType];
    if (!format)
      throw new ApiError('UNPROCESSABLE_ENTITY', `Thumbnails are made of images (${Object.keys(FORMATS).join(', ')})`);
    const key = thumbnailKey(id, mimeType, spec);
    if ((await this.storage.size(key)) !== undefined) return key;
    let making = this.making.get(key);
    if (!making) {
      making = this.make(original, key, format, spec).finally(() => this.making.delete(key));
      this.making.set(key, making);
    }
    await making;
    return key;
  }

  private async make(
    original: string,
    key: string,
    format: (typeof FORMATS)[string],
    spec: ThumbnailSpec,
  ): Promise<void> {
    const sharp = await loadSharp();
    const source = await this.storage.get(original);
    if (!source) throw new ApiError('NOT_FOUND', 'The stored file is missing');
    const resize = sharp({ limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .resize(spec.width, spec.height, { fit: spec.fit, withoutEnlargement: true })
      .toFormat(format.format);
    const input: Readable = source.body;
    input.on('error', (error) => resize.destroy(error));
    input.pipe(resize);
    try {
      await this.storage.put(key, resize, format.type);
    } catch (error) {
      input.destroy();
      await this.storage.remove(key).catch(() => undefined);
      throw new ApiError(
        'UNPROCESSABLE_ENTITY',
        'A thumbnail cannot be made of this file: it is not a readable image',
        undefined,
        error,
      );
    }
  }
}
