/** Operations one POST /api/v1/batch may carry at most. */
export const MAX_BATCH_OPERATIONS = 100;

/** What a batch operation may do: the entity operations, and a custom endpoint. */
export const BATCH_OPS = ['create', 'update', 'increment', 'archive', 'restore', 'delete', 'endpoint'] as const;
export type BatchOp = (typeof BATCH_OPS)[number];
