/** The moves a content-base record's `status` may make (docs/concepts/entities.md, content base); metadata shows them. */
export const CONTENT_STATUS_MOVES: Readonly<Record<string, readonly string[]>> = {
  draft: ['published'],
  published: ['draft', 'archived'],
  archived: ['draft'],
};
