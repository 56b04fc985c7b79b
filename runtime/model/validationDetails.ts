import { FORMAT_PATTERNS, ISO_DATE_PATTERN, NON_BLANK_PATTERN, OBJECT_ID_PATTERN, URL_PATTERN } from './patterns.js';

/** The parts of an AJV error the runtime reads. */
export interface ValidationIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** A validator compiled by `entigen build` (AJV standalone code). */
export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: ValidationIssue[] | null;
}

/** Where a body that is not even an object reports its problem. */
export const BODY_KEY = 'body';

/**
 * AJV errors -> the spec's `details`: dotted field path -> one message. `prefix` places
 * a bulk item's errors under `items.3`. The first message of a field wins.
 */
export function validationDetails(issues: readonly ValidationIssue[], prefix = ''): Record<string, string> {
  // No prototype: a body key `__proto__` or `constructor` is reported like any other.
  const details = Object.create(null) as Record<string, string>;
  for (const issue of issues) {
    const base = pointerToPath(issue.instancePath);
    let path = base;
    let message: string;
    switch (issue.keyword) {
      case 'required':
        path = join(base, String(issue.params.missingProperty));
        message = 'is required';
        break;
      case 'additionalProperties':
        path = join(base, String(issue.params.additionalProperty));
        message = 'is not allowed';
        break;
      case 'enum':
        message = `must be one of ${(issue.params.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`;
        break;
      case 'pattern':
        message = patternMessage(String(issue.params.pattern));
        break;
      case 'type':
        message = `must be ${String(issue.params.type).split(',').join(' or ')}`;
        break;
      case 'minProperties':
        message = 'must name at least one field';
        break;
      case 'minimum':
        message = `must be at least ${String(issue.params.limit)}`;
        break;
      case 'maximum':
        message = `must be at most ${String(issue.params.limit)}`;
        break;
      case 'minLength':
        message = `must be at least ${String(issue.params.limit)} characters`;
        break;
      case 'maxLength':
        message = `must be at most ${String(issue.params.limit)} characters`;
        break;
      case 'minItems':
        message = `must hold at least ${String(issue.params.limit)} items`;
        break;
      case 'maxItems':
        message = `must hold at most ${String(issue.params.limit)} items`;
        break;
      default:
        message = issue.message ?? 'is invalid';
    }
    const key = join(prefix, path) || prefix || BODY_KEY;
    if (!(key in details)) details[key] = message;
  }
  return details;
}

function patternMessage(pattern: string): string {
  if (pattern === NON_BLANK_PATTERN) return 'must not be empty';
  if (pattern.startsWith(OBJECT_ID_PATTERN)) return 'must be an id of 24 hexadecimal characters';
  if (pattern.startsWith(ISO_DATE_PATTERN)) return 'must be an ISO 8601 date or date-time';
  if (pattern.startsWith(URL_PATTERN)) return 'must be an absolute URL';
  const format = Object.values(FORMAT_PATTERNS).find((f) => f.pattern === pattern);
  if (format) return format.message;
  return `must match the pattern ${pattern}`;
}

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function join(a: string, b: string): string {
  return a && b ? `${a}.${b}` : a || b;
}
