import { ApiError, type ErrorDetails } from '../errors/apiError.js';

/** The codes a hook may refuse a write with: the client errors of the registry. */
export type RejectCode = 'VALIDATION_ERROR' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'UNPROCESSABLE_ENTITY';

const REJECT_CODES: readonly RejectCode[] = [
  'VALIDATION_ERROR',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'UNPROCESSABLE_ENTITY',
];

/**
 * Refuses the write from a hook: the client gets the spec's envelope with this code (400, 403,
 * 404, 409 or 422), the message and per-field details; nothing of the write is stored.
 */
export function reject(code: RejectCode, message: string, details?: ErrorDetails): never {
  if (!REJECT_CODES.includes(code)) throw new Error(`reject: ${String(code)} is not one of ${REJECT_CODES.join(', ')}`);
  throw new ApiError(code, message, details);
}
