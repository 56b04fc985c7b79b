import type { JSX } from 'preact';
import type { FieldMeta } from '../model.js';
import type { Session } from '../session.js';
import { RefListPicker } from './RefListPicker.js';
import { RefPicker } from './RefPicker.js';

/** The form's text for each field: what the inputs hold before it becomes the request body. */
export type Draft = Record<string, string | boolean | string[]>;

const JSON_TYPES = ['object', 'any'];

/** Names that hold a line of text even when searched (a title, a name), not paragraphs. */
const ONE_LINE = ['title', 'name', 'label', 'displayName', 'slug', 'sku', 'code', 'email', 'key'];

/** A searched text field is written in paragraphs (body, description), unless its name or length says otherwise. */
function isLongText(field: FieldMeta): boolean {
  const maxLength = field.constraints?.maxLength as number | undefined;
  return field.type === 'string' && field.search && !ONE_LINE.includes(field.name) && (maxLength ?? 1000) > 200;
}

/** A record's value as the input holds it. */
export function toDraft(field: FieldMeta, value: unknown): string | boolean | string[] {
  if (field.type === 'boolean') return value === true;
  if (field.type === 'encryptedKey') return '';
  if (value === null || value === undefined) return field.type === 'array' && (field.values || field.ref) ? [] : '';
  if (field.type === 'array') {
    if (field.values || field.ref) return (value as string[]).map(String);
    if (field.items && JSON_TYPES.includes(field.items.type)) return JSON.stringify(value, null, 2);
    return (value as unknown[]).map(String).join('\n');
  }
  if (JSON_TYPES.includes(field.type)) return JSON.stringify(value, null, 2);
  if (field.type === 'isoDate' && typeof value === 'string') return toLocalInput(value);
  return String(value);
}

/** The input's text as the API expects it; throws a message for the field when it cannot be read. */
export function fromDraft(field: FieldMeta, draft: string | boolean | string[]): unknown {
  if (field.type === 'boolean') return draft === true;
  if (Array.isArray(draft)) return draft;
  const text = String(draft);
  if (text.trim() === '') return field.type === 'array' ? [] : null;
  if (field.type === 'int' || field.type === 'float') {
    const number = Number(text);
    if (!Number.isFinite(number)) throw new Error('must be a number');
    return number;
  }
  if (field.type === 'isoDate') {
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) throw new Error('must be a date and time');
    return date.toISOString();
  }
  if (
    JSON_TYPES.includes(field.type) ||
    (field.type === 'array' && field.items && JSON_TYPES.includes(field.items.type))
  ) {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new Error(`must be valid JSON (${(error as Error).message})`);
    }
  }
  if (field.type === 'array') {
    const items = text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    return field.items?.type === 'int' || field.items?.type === 'float' ? items.map(Number) : items;
  }
  return text;
}

function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

interface Props {
  field: FieldMeta;
  value: string | boolean | string[];
  error?: string;
  session: Session;
  /** encryptedKey: whether the record holds a value (shown masked; the value is never read back). */
  isSet?: boolean;
  /** Errors of an object's properties, by property name. */
  nestedErrors?: Record<string, string>;
  onChange(value: string | boolean | string[]): void;
}

/** One field of the create and edit forms, chosen by its metadata type, with its server error beside it. */
export function FieldInput({ field, value, error, session, isSet, nestedErrors, onChange }: Props) {
  const id = `field-${field.name}`;
  const errorId = `${id}-error`;
  const common = {
    id,
    name: field.name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': error ? errorId : undefined,
  };
  const constraints = field.constraints ?? {};
  let input: JSX.Element;
  if (field.type === 'boolean') {
    input = (
      <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />
    );
  } else if (field.type === 'enum' && field.values) {
    input = (
      <select
        {...common}
        required={field.required}
        value={String(value)}
        onChange={(e) => onChange(e.currentTarget.value)}
      >
        {/* A required choice not made yet reads as such (the first option would look chosen). */}
        {(!field.required || value === '') && <option value="">{field.required ? 'Choose…' : '—'}</option>}
        {field.values.map((v) => (
          <option key={v.key} value={v.key}>
            {v.label}
          </option>
        ))}
      </select>
    );
  } else if (field.type === 'array' && field.values) {
    const chosen = value as string[];
    input = (
      <fieldset {...common} class="choices">
        <legend class="visually-hidden">{field.label}</legend>
        {field.values.map((v) => (
          <label key={v.key} class="check">
            <input
              type="checkbox"
              checked={chosen.includes(v.key)}
              onChange={(e) =>
                onChange(e.currentTarget.checked ? [...chosen, v.key] : chosen.filter((k) => k !== v.key))
              }
            />
            {v.label}
          </label>
        ))}
      </fieldset>
    );
  } else if (field.ref && field.type === 'array') {
    // A list of references: each by name with a way to remove it, and the picker to add one.
    input = (
      <RefListPicker
        id={id}
        label={field.label}
        values={value as string[]}
        plural={field.ref}
        session={session}
        invalid={!!error}
        describedBy={error ? errorId : undefined}
        onChange={onChange}
      />
    );
  } else if (field.ref) {
    input = (
      <RefPicker
        id={id}
        label={field.label}
        value={String(value)}
        required={field.required}
        invalid={!!error}
        describedBy={error ? errorId : undefined}
        plural={field.ref}
        session={session}
        onChange={onChange}
      />
    );
  } else if (field.type === 'object' && field.properties && field.properties.length > 0) {
    input = (
      <ObjectInput
        field={field}
        value={String(value)}
        session={session}
        errors={nestedErrors ?? {}}
        onChange={onChange}
      />
    );
  } else if (field.type === 'encryptedKey') {
    input = (
      <input
        {...common}
        type="password"
        autocomplete="new-password"
        placeholder={isSet ? '•••••••• (set; type to replace)' : 'Not set'}
        value={String(value)}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );
  } else if (field.type === 'array' || JSON_TYPES.includes(field.type) || isLongText(field)) {
    const json = JSON_TYPES.includes(field.type) || (field.items && JSON_TYPES.includes(field.items.type));
    input = (
      <textarea
        {...common}
        rows={json ? 6 : field.type === 'array' ? 4 : 5}
        required={field.required && field.type !== 'array'}
        class={json ? 'code' : undefined}
        spellcheck={!json}
        value={String(value)}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );
  } else {
    const type =
      field.type === 'int' || field.type === 'float'
        ? 'number'
        : field.type === 'isoDate'
          ? 'datetime-local'
          : field.type === 'url'
            ? 'url'
            : 'text';
    input = (
      <input
        {...common}
        type={type}
        step={field.type === 'float' ? 'any' : field.type === 'int' ? '1' : undefined}
        min={constraints.min as number | undefined}
        max={constraints.max as number | undefined}
        maxLength={constraints.maxLength as number | undefined}
        required={field.required}
        value={String(value)}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );
  }
  const hint =
    field.type === 'array' && !field.values && !field.ref
      ? JSON_TYPES.includes(field.items?.type ?? '')
        ? 'A JSON array.'
        : 'One value per line.'
      : JSON_TYPES.includes(field.type)
        ? 'JSON.'
        : undefined;
  return (
    <div class={`field${error ? ' has-error' : ''}`}>
      {field.type === 'boolean' ? (
        <label class="check" for={id}>
          {input}
          {field.label}
        </label>
      ) : (
        <>
          <label for={id}>
            {field.label}
            {field.required && <span aria-hidden="true"> *</span>}
          </label>
          {input}
        </>
      )}
      {hint && <small class="muted">{hint}</small>}
      {error && (
        <p id={errorId} class="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * An object with declared properties as a group of its own inputs. The form keeps the object as
 * JSON text (as for free-form objects), read and written here property by property.
 */
function ObjectInput({
  field,
  value,
  session,
  errors,
  onChange,
}: {
  field: FieldMeta;
  value: string;
  session: Session;
  errors: Record<string, string>;
  onChange(value: string): void;
}) {
  let current: Record<string, unknown> = {};
  try {
    const parsed = value.trim() ? JSON.parse(value) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) current = parsed;
  } catch {
    current = {};
  }
  return (
    <fieldset class="object" id={`field-${field.name}`}>
      <legend class="visually-hidden">{field.label}</legend>
      {field.properties!.map((property) => {
        const nested = { ...property, name: `${field.name}.${property.name}` };
        return (
          <FieldInput
            key={property.name}
            field={nested}
            value={toDraft(property, current[property.name])}
            error={errors[property.name]}
            session={session}
            onChange={(next) => {
              const out = { ...current };
              try {
                const parsed = fromDraft(property, next);
                if (parsed === null) delete out[property.name];
                else out[property.name] = parsed;
              } catch {
                // A value that cannot be read yet (a half-typed number) is left out until it can.
                delete out[property.name];
              }
              onChange(Object.keys(out).length > 0 ? JSON.stringify(out) : '');
            }}
          />
        );
      })}
    </fieldset>
  );
}
