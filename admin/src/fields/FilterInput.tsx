import type { FieldMeta } from '../model.js';
import type { Session } from '../session.js';
import { RefPicker } from './RefPicker.js';

/** One declared filter of a list (`field=value`): a select for enums and booleans, the picker for references. */
export function FilterInput({
  field,
  session,
  value,
  onChange,
}: {
  field: FieldMeta;
  session: Session;
  value: string;
  onChange(value: string): void;
}) {
  const id = `filter-${field.name}`;
  if (field.values)
    return (
      <label>
        {field.label}
        <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">Any</option>
          {field.values.map((v) => (
            <option key={v.key} value={v.key}>
              {v.label}
            </option>
          ))}
        </select>
      </label>
    );
  if (field.type === 'boolean')
    return (
      <label>
        {field.label}
        <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">Any</option>
          <option value="true">Yes</option>
          <option value="false">No</option>
        </select>
      </label>
    );
  if (field.ref)
    return (
      <div class="field">
        <label for={id}>{field.label}</label>
        <RefPicker id={id} label={field.label} value={value} plural={field.ref} session={session} onChange={onChange} />
      </div>
    );
  return (
    <label>
      {field.label}
      <input
        id={id}
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
        type={field.type === 'int' || field.type === 'float' ? 'number' : 'text'}
      />
    </label>
  );
}
