import { useState } from 'preact/hooks';
import { RefValue } from '../fields/RefLink.js';
import { RefListPicker } from '../fields/RefListPicker.js';
import { RefPicker } from '../fields/RefPicker.js';
import type { FieldMeta } from '../model.js';
import type { Session } from '../session.js';

/** A list parameter `field[op]` with its value, as the address holds it. */
export interface Condition {
  field: string;
  operator: string;
  value: string;
}

const CONDITION = /^(\w+)\[(\w+)\]$/;
const LABELS: Record<string, string> = {
  eq: 'is',
  ne: 'is not',
  gt: 'greater than',
  gte: 'at least',
  lt: 'less than',
  lte: 'at most',
  in: 'is one of',
  nin: 'is none of',
  exists: 'has a value',
  contains: 'contains',
  startsWith: 'starts with',
};

function inputType(field: FieldMeta | undefined, operator: string): string {
  if (operator === 'in' || operator === 'nin') return 'text';
  if (field?.type === 'int' || field?.type === 'float') return 'number';
  return field?.type === 'isoDate' ? 'datetime-local' : 'text';
}

/** The comparison conditions among the page's parameters (only on the entity's filters). */
export function conditionsOf(params: Record<string, string>, filters: string[]): Condition[] {
  return Object.entries(params).flatMap(([name, value]) => {
    const match = CONDITION.exec(name);
    return match && filters.includes(match[1]) ? [{ field: match[1], operator: match[2], value }] : [];
  });
}

/**
 * The comparison filters of the list language (`price[gt]=100`, `status[in]=a,b`): the conditions
 * in force, each removable, and a row to add one from the operators the field's metadata names.
 */
export function Conditions({
  session,
  fields,
  conditions,
  onAdd,
  onRemove,
}: {
  session: Session;
  fields: FieldMeta[];
  conditions: Condition[];
  onAdd(condition: Condition): void;
  onRemove(condition: Condition): void;
}) {
  const usable = fields.filter((f) => (f.operators ?? []).length > 0);
  const [name, setName] = useState(usable[0]?.name ?? '');
  const field = usable.find((f) => f.name === name);
  const [operator, setOperator] = useState(field?.operators?.[0] ?? 'eq');
  const [value, setValue] = useState('');
  if (usable.length === 0) return null;
  const operators = field?.operators ?? [];
  const chosen = operators.includes(operator) ? operator : operators[0];
  const add = (event: Event) => {
    event.preventDefault();
    if (!field) return;
    let text = value;
    // A date and time picked here is local time; the API takes ISO 8601.
    if (field.type === 'isoDate' && chosen !== 'exists' && value) text = new Date(value).toISOString();
    // A reference picked nothing yet: there is no condition to add.
    if (field.ref && chosen !== 'exists' && !text) return;
    onAdd({ field: field.name, operator: chosen, value: chosen === 'exists' ? value || 'true' : text });
    setValue('');
  };
  const labelOf = (fieldName: string) => fields.find((f) => f.name === fieldName)?.label ?? fieldName;
  const refOf = (fieldName: string) => fields.find((f) => f.name === fieldName)?.ref ?? undefined;
  const several = chosen === 'in' || chosen === 'nin';
  return (
    <form class="conditions" onSubmit={add} aria-label="Conditions">
      {conditions.length > 0 && (
        <ul class="chips">
          {conditions.map((c) => (
            <li key={`${c.field}[${c.operator}]`}>
              {labelOf(c.field)} {LABELS[c.operator] ?? c.operator}{' '}
              {c.operator === 'exists' ? (
                `(${c.value})`
              ) : refOf(c.field) ? (
                <RefValue session={session} plural={refOf(c.field)!} value={c.value.split(',')} />
              ) : (
                c.value
              )}
              <button
                type="button"
                class="link"
                aria-label={`Remove the condition on ${labelOf(c.field)}`}
                onClick={() => onRemove(c)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <label>
        Condition on
        <select value={name} onChange={(e) => setName(e.currentTarget.value)}>
          {usable.map((f) => (
            <option key={f.name} value={f.name}>
              {f.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Operator
        <select value={chosen} onChange={(e) => setOperator(e.currentTarget.value)}>
          {operators.map((op) => (
            <option key={op} value={op}>
              {LABELS[op] ?? op}
            </option>
          ))}
        </select>
      </label>
      <div class="condition-value">
        <label for="condition-value">Value</label>
        {chosen === 'exists' ? (
          <select id="condition-value" value={value || 'true'} onChange={(e) => setValue(e.currentTarget.value)}>
            <option value="true">Yes</option>
            <option value="false">No</option>
          </select>
        ) : field?.ref && several ? (
          <RefListPicker
            id="condition-value"
            label="Value"
            values={value ? value.split(',') : []}
            plural={field.ref}
            session={session}
            onChange={(ids) => setValue(ids.join(','))}
          />
        ) : field?.ref ? (
          <RefPicker
            id="condition-value"
            label="Value"
            value={value}
            plural={field.ref}
            session={session}
            onChange={setValue}
          />
        ) : (
          <input
            id="condition-value"
            required
            value={value}
            placeholder={chosen === 'in' || chosen === 'nin' ? 'a, b, c' : undefined}
            type={inputType(field, chosen)}
            step={field?.type === 'float' ? 'any' : undefined}
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        )}
      </div>
      <button type="submit">Add condition</button>
    </form>
  );
}
