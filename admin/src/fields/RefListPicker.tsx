import type { Session } from '../session.js';
import { RefLink } from './RefLink.js';
import { RefPicker } from './RefPicker.js';

interface Props {
  id: string;
  label: string;
  /** The ids chosen, in order. */
  values: string[];
  plural: string;
  session: Session;
  invalid?: boolean;
  describedBy?: string;
  onChange(values: string[]): void;
}

/**
 * Several references: each chosen one by name, linked, with a way to remove it, and the
 * searchable picker to add one (a form's list of references, a condition's `in`).
 */
export function RefListPicker({ id, label, values, plural, session, invalid, describedBy, onChange }: Props) {
  return (
    <div class="ref-list">
      {values.length > 0 && (
        <ul>
          {values.map((ref) => (
            <li key={ref}>
              <RefLink session={session} plural={plural} id={ref} />
              <button
                type="button"
                class="link"
                aria-label={`Remove from ${label}`}
                onClick={() => onChange(values.filter((other) => other !== ref))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <RefPicker
        id={id}
        label={`Add to ${label}`}
        value=""
        plural={plural}
        session={session}
        invalid={invalid}
        describedBy={describedBy}
        onChange={(picked) => {
          if (picked && !values.includes(picked)) onChange([...values, picked]);
        }}
      />
    </div>
  );
}
