import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { type EntityMeta, type ListPage, type RecordDoc, recordTitle, titleField } from '../model.js';

interface Props {
  id?: string;
  label: string;
  value: string;
  /** The referenced entity's metadata; without it (not visible to the caller) the id is typed. */
  target: EntityMeta | undefined;
  required?: boolean;
  invalid?: boolean;
  describedBy?: string;
  onChange(value: string): void;
}

const SUGGESTIONS = 10;

/**
 * A searchable picker of one referenced record (a combobox in the WAI-ARIA pattern): typing
 * searches the referenced entity (its text search, or the newest records), arrows move, Enter
 * picks, Escape closes. The value is the record's id.
 */
export function RefPicker({ id, label, value, target, required, invalid, describedBy, onChange }: Props) {
  const listId = useId();
  const [text, setText] = useState('');
  const [options, setOptions] = useState<RecordDoc[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const request = useRef<AbortController | undefined>(undefined);

  // The label of the current value.
  useEffect(() => {
    if (!target || !value) return setText(value ?? '');
    const controller = new AbortController();
    api<RecordDoc>('GET', `/${target.plural}/${encodeURIComponent(value)}`, { signal: controller.signal })
      .then((record) => setText(recordTitle(target, record)))
      .catch(() => setText(value));
    return () => controller.abort();
  }, [value, target?.plural]);

  const search = async (term: string) => {
    if (!target) return;
    request.current?.abort();
    const controller = new AbortController();
    request.current = controller;
    const field = titleField(target);
    const params =
      term && target.searchFields.length > 0
        ? { q: term, limit: SUGGESTIONS }
        : { limit: SUGGESTIONS, sort: field ? field.name : undefined };
    try {
      const page = await api<ListPage>('GET', `/${target.plural}${query(params)}`, { signal: controller.signal });
      const lower = term.toLowerCase();
      // Without text search, the page is narrowed here by its title.
      setOptions(
        term && target.searchFields.length === 0
          ? page.items.filter((r) => recordTitle(target, r).toLowerCase().includes(lower))
          : page.items,
      );
      setProblem(undefined);
      setOpen(true);
      setActive(-1);
    } catch (error) {
      if ((error as Error).name !== 'AbortError') setProblem((error as Error).message);
    }
  };

  const pick = (record: RecordDoc) => {
    onChange(record.id);
    setText(target ? recordTitle(target, record) : record.id);
    setOpen(false);
  };

  if (!target)
    return (
      <input
        id={id}
        value={value}
        required={required}
        aria-invalid={invalid}
        aria-describedby={describedBy}
        pattern="[0-9a-f]{24}"
        placeholder="Record id"
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );

  return (
    <div class="combobox">
      <input
        id={id}
        role="combobox"
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={active >= 0 ? `${listId}-${active}` : undefined}
        aria-invalid={invalid}
        aria-describedby={describedBy}
        required={required && !value}
        placeholder={`Search ${target.label.toLowerCase()}`}
        value={text}
        autocomplete="off"
        // The input's own text, not this render's: a fill focuses and types at once, and a search
        // for the text before it would answer last.
        onFocus={(e) => void search(value ? '' : e.currentTarget.value)}
        onInput={(e) => {
          setText(e.currentTarget.value);
          if (!e.currentTarget.value) onChange('');
          void search(e.currentTarget.value);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            setOpen(true);
            setActive(Math.min(active + 1, options.length - 1));
          } else if (e.key === 'ArrowUp') {
            e.preventDefault();
            setActive(Math.max(active - 1, 0));
          } else if (e.key === 'Enter' && open && active >= 0) {
            e.preventDefault();
            pick(options[active]);
          } else if (e.key === 'Escape') setOpen(false);
        }}
        onBlur={() => setTimeout(() => setOpen(false), 150)}
      />
      {value && (
        <button
          type="button"
          class="link"
          aria-label={`Clear ${label}`}
          onClick={() => {
            onChange('');
            setText('');
          }}
        >
          ×
        </button>
      )}
      <div id={listId} role="listbox" aria-label={label} hidden={!open} class="options">
        {options.length === 0 && <div class="muted">{problem ?? 'No matches'}</div>}
        {options.map((record, index) => (
          <div
            key={record.id}
            id={`${listId}-${index}`}
            role="option"
            tabIndex={-1}
            aria-selected={index === active}
            onMouseDown={(e) => {
              e.preventDefault();
              pick(record);
            }}
          >
            {recordTitle(target, record)} <span class="muted">{record.id}</span>
          </div>
        ))}
      </div>
    </div>
  );
}
