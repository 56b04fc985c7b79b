/** Every error code of the spec (and DESIGN.md), once: status and default message. */
export const ERROR_CODES = {
  VALIDATION_ERROR: { status: 400, message: 'Request validation failed' },
  UNAUTHORIZED: { status: 401, message: 'Authentication required' },
  FORBIDDEN: { status: 403, message: 'You do not have permission to do this' },
  EMAIL_NOT_VERIFIED: { status: 403, message: 'Confirm your email address first' },
  MFA_ENROLLMENT_REQUIRED: { status: 403, message: 'Turn on two-factor authentication first' },
  NOT_FOUND: { status: 404, message: 'Resource not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed' },
  CONFLICT: { status: 409, message: 'Resource conflicts with an existing one' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request took too long to arrive' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Request body is too large' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'The requested range is not in the file' },
  HEADERS_TOO_LARGE: { status: 431, message: 'Request headers are too large' },
  UNPROCESSABLE_ENTITY: { status: 422, message: 'The request breaks a business rule' },
  RATE_LIMITED: { status: 429, message: 'Too many requests' },
  INTERNAL_ERROR: { status: 500, message: 'Internal server error' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service temporarily unavailable' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorDetails = Record<string, string>;

/** Marks an ApiError across copies of this module (a project's hooks may load another copy of entigen/runtime). */
const API_ERROR = Symbol.for('entigen.ApiError');

/** The one error class: operations throw it, the HTTP layer writes it as the error envelope. */
export class ApiError extends Error {
  readonly status: number;
  readonly [API_ERROR] = true;
  /** Sent as Retry-After (429 from a lockout rather than the rate limiter). */
  retryAfterSeconds?: number;

  /** `instanceof ApiError` holds for an ApiError of any copy of this module. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[API_ERROR] === true;
  }

  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code].message,
    readonly details?: ErrorDetails,
    /** What went wrong inside (logged with the correlation id, never sent). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.status = ERROR_CODES[code].status;
  }

  toBody(): { error: { code: ErrorCode; message: string; details?: ErrorDetails } } {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

/**
 * A details map for keys that come from the request: without a prototype, `__proto__` and
 * `constructor` are ordinary keys (set, found by `in`, and serialized) like any other.
 */
export function newDetails(): ErrorDetails {
  return Object.create(null) as ErrorDetails;
}

export const validationError = (details: ErrorDetails, message: string = ERROR_CODES.VALIDATION_ERROR.message) =>
  new ApiError('VALIDATION_ERROR', message, details);
export const notFound = (what = 'Resource') => new ApiError('NOT_FOUND', `${what} not found`);
