// Value shapes shared by the generated validators and the runtime's query parsing.
import type { StringFormat } from './types.js';

/** 24 lowercase hex characters: the ObjectId layout used for every id. */
export const OBJECT_ID_PATTERN = '^[0-9a-f]{24}$';

/** Something besides white space (a name, a label). */
export const NON_BLANK_PATTERN = '\\S';

/** ISO 8601 calendar date, optionally with a time and zone. */
export const ISO_DATE_PATTERN =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])' +
  '([Tt ]([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?([Zz]|[+-]([01]\\d|2[0-3]):?[0-5]\\d)?)?$';

/** An absolute URL with a scheme and no whitespace. */
export const URL_PATTERN = '^[A-Za-z][A-Za-z0-9+.-]*://[^\\s]+$';

/** Macros accepted where a value is resolved at write time: `{{user.id}}`, `{{now}}`. */
export const OBJECT_ID_MACRO_PATTERN = '^\\{\\{user\\.id\\}\\}$';
export const DATE_MACRO_PATTERN = '^\\{\\{now\\}\\}$';

/**
 * The string formats of field constraints, as patterns (the validators compile them inline and
 * import nothing) with the message a refusal carries.
 */
export const FORMAT_PATTERNS: Record<StringFormat, { pattern: string; message: string }> = {
  // One @, no spaces, a dot in the domain: what a form would accept; deliverability is not checked.
  email: { pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', message: 'must be an email address' },
  uri: { pattern: '^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]+$', message: 'must be a URI' },
  uuid: {
    pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$',
    message: 'must be a UUID',
  },
  'date-time': {
    pattern:
      '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt ]([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$',
    message: 'must be an ISO 8601 date-time with a zone',
  },
};

/** Emails are compared and stored trimmed and in lower case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
