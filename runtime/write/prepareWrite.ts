import type { Caller } from '../context/caller.js';
import type { FieldCipher } from '../crypto/fieldCipher.js';
import { ApiError } from '../errors/apiError.js';
import { CONTENT_STATUS_MOVES } from '../model/contentStatus.js';
import { newObjectId } from '../model/objectId.js';
import { parseIsoDate } from '../model/parseIsoDate.js';
import type { EntityModel } from '../model/types.js';
import type { Doc } from '../store/types.js';

export function newId(): string {
  return newObjectId();
}

/**
 * A shallow copy of a record's values, to which fields are then added. Not `{ ...values }`: V8
 * (Node 20) adds a property to a spread copy about 30 times slower, and the copy stays slow to
 * read. A `__proto__` key (refused in request bodies, but values also come from hooks) stays an
 * own property, as a spread keeps it, rather than becoming the copy's prototype.
 */
export function copyValues<T extends object>(values: T): T {
  return Object.hasOwn(values, '__proto__') ? { ...values } : Object.assign({}, values);
}

/** Fields missing from a create body get their declared defaults (copied, never shared). */
export function applyDefaults(entity: EntityModel, body: Record<string, unknown>): Record<string, unknown> {
  const out = copyValues(body);
  for (const field of entity.fields) {
    if (field.default === undefined) continue;
    const value = out[field.name] as Record<string, unknown> | undefined;
    // A localized field's default is the default locale's value.
    if (field.localized && value && typeof value === 'object' && value[field.localized.defaultLocale] === undefined)
      out[field.name] = { ...value, [field.localized.defaultLocale]: field.default };
    else if (value === undefined)
      out[field.name] = field.localized ? { [field.localized.defaultLocale]: field.default } : copyOf(field.default);
  }
  return out;
}

/** A default as a value of its own: the common empty list and object without structuredClone's cost. */
function copyOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value) && value.length === 0) return [];
  if (Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length === 0) return {};
  return structuredClone(value);
}

const MACRO = /\{\{\s*(user\.id|user\.name|user\.email|now)\s*\}\}/g;

/** `{{user.id}}`, `{{user.name}}`, `{{user.email}}`, `{{now}}` in any string value; other `{{...}}` stays. */
export function resolveMacros(values: Record<string, unknown>, caller: Caller, now: Date): Record<string, unknown> {
  const replacement = (name: string): string | undefined =>
    name === 'user.id'
      ? caller.user?.id
      : name === 'user.name'
        ? caller.user?.displayName
        : name === 'user.email'
          ? caller.user?.email
          : now.toISOString();
  const resolve = (value: unknown): unknown => {
    if (typeof value === 'string') {
      return value.includes('{{') ? value.replace(MACRO, (text, name: string) => replacement(name) ?? text) : value;
    }
    if (Array.isArray(value)) return value.map(resolve);
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        const resolved = resolve((value as Record<string, unknown>)[key]);
        // An own property, as the body had it: assigning `__proto__` would set the prototype instead.
        if (key === '__proto__')
          Object.defineProperty(out, key, { value: resolved, enumerable: true, writable: true, configurable: true });
        else out[key] = resolved;
      }
      return out;
    }
    return value;
  };
  return resolve(values) as Record<string, unknown>;
}

/** isoDate values are stored as full UTC timestamps, so they compare and range-filter as text. */
export function normalizeDates(entity: EntityModel, values: Record<string, unknown>): Record<string, unknown> {
  const out = { ...values };
  for (const field of entity.fields) {
    const value = out[field.name];
    if (field.type === 'isoDate' && typeof value === 'string') out[field.name] = toTimestamp(value, field.name);
    if (field.type === 'isoDate' && field.localized && value && typeof value === 'object')
      out[field.name] = Object.fromEntries(
        Object.entries(value).map(([locale, v]) => [
          locale,
          typeof v === 'string' ? toTimestamp(v, `${field.name}.${locale}`) : v,
        ]),
      );
    if (field.type === 'array' && field.items?.type === 'isoDate' && Array.isArray(value)) {
      out[field.name] = value.map((v) => (typeof v === 'string' ? toTimestamp(v, field.name) : v));
    }
  }
  return out;
}

function toTimestamp(value: string, field: string): string {
  const time = parseIsoDate(value);
  if (time === undefined)
    throw new ApiError('VALIDATION_ERROR', 'Request validation failed', {
      [field]: 'must be an ISO 8601 date or date-time',
    });
  return new Date(time).toISOString();
}

/** encryptedKey values are encrypted before they reach the store. */
export function encryptFields(
  entity: EntityModel,
  values: Record<string, unknown>,
  cipher: FieldCipher,
): Record<string, unknown> {
  const encrypted = entity.fields.filter((f) => f.type === 'encryptedKey' && typeof values[f.name] === 'string');
  if (encrypted.length === 0) return values;
  const out = { ...values };
  for (const field of encrypted) out[field.name] = cipher.encrypt(out[field.name] as string);
  return out;
}

/** Content-base status rules: legal moves only; publishing sets publishedAt when it is empty. */
export function applyContentStatus(
  entity: EntityModel,
  values: Record<string, unknown>,
  current: Doc | undefined,
  now: Date,
): Record<string, unknown> {
  if (entity.base !== 'content' || values.status === undefined || values.status === null) return values;
  const from = current?.status as string | undefined;
  const to = values.status as string;
  if (from && from !== to && !CONTENT_STATUS_MOVES[from]?.includes(to)) {
    throw new ApiError('UNPROCESSABLE_ENTITY', `Status cannot move from ${from} to ${to}`, {
      status: `cannot move from ${from} to ${to}`,
    });
  }
  const publishedAt = values.publishedAt !== undefined ? values.publishedAt : current?.publishedAt;
  if (to === 'published' && (publishedAt === null || publishedAt === undefined))
    return { ...values, publishedAt: now.toISOString() };
  return values;
}
