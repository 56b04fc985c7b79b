/** How a thumbnail fills its box (sharp's `fit`): cover crops, contain pads, inside and outside keep the ratio, fill stretches. */
export const THUMBNAIL_FITS = ['cover', 'contain', 'inside', 'outside', 'fill'] as const;
export type ThumbnailFit = (typeof THUMBNAIL_FITS)[number];

/** The thumbnail sizes served unless uploads.thumbnails.sizes says otherwise. */
export const DEFAULT_THUMBNAIL_SIZES = ['100x100', '200x200', '400x400', '800x800'];
/** A size is WIDTHxHEIGHT, each from 1 to 4000 pixels. */
export const THUMBNAIL_SIZE_PATTERN = /^([1-9]\d{0,3})x([1-9]\d{0,3})$/;
export const MAX_THUMBNAIL_SIZES = 20;
