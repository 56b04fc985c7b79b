import type { Collation, SortKey, Where } from '../store/types.js';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 200;
export const MAX_POPULATE_DEPTH = 5;
export const MAX_POPULATE_PATHS = 20;
export const MAX_QUERY_TEXT = 500;

/** A list request after parsing: every value typed and checked against the entity. */
export interface ListQuery {
  text?: string;
  limit: number;
  skip: number;
  /** Keyset position from a cursor: records after this id. */
  after?: string;
  /** Direction of the id order (default newest first). */
  idDirection: 'asc' | 'desc';
  /** Sort on fields other than id; cursors are refused with it and none are returned. */
  sort?: SortKey[];
  collation?: Collation;
  select?: string[];
  includeArchived: boolean;
  /** `trash=only` lists the trash, `trash=include` the trash as well (entities that keep one). */
  trash?: TrashView;
  populate?: PopulateSpec;
  /** Filters and date ranges, all of which must hold. */
  where: Where[];
}

export type TrashView = 'only' | 'include';

/** Reference paths to populate, each a list of field names (`author.org` -> ['author', 'org']). */
export interface PopulateSpec {
  paths: string[][];
}

/** What a cursor carries: the last id seen and the id direction. */
export interface CursorPosition {
  after: string;
  direction: 'asc' | 'desc';
}
