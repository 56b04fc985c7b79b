import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import type { UserView } from '../apiTypes.js';
import { rememberLabel, useLabel } from '../labels.js';
import { type EntityMeta, isRecordId, type ListPage, recordTitle, titleField, USERS, userLabel } from '../model.js';
import { can, isAdmin } from '../permissions.js';
import type { Session } from '../session.js';

interface Props {
  id?: string;
  label: string;
  value: string;
  /** The referenced entity's plural (`users` for an account). */
  plural: string;
  session: Session;
  required?: boolean;
  invalid?: boolean;
  describedBy?: string;
  onChange(value: string): void;
}

const SUGGESTIONS = 10;

/** One record the picker offers: its id, its label, and a second line. */
interface Choice {
  id: string;
  label: string;
  detail?: string;
}

/** How a picker finds the records it offers for a search term; a message when it cannot list any. */
type Finder = ((term: string, signal: AbortSignal) => Promise<Choice[]>) | { unavailable: string };

/**
 * What the caller may pick from: the referenced entity (its text search, else its newest records
 * narrowed by label), the accounts for an administrator, their own account for anyone else.
 */
function finderFor(session: Session, plural: string): Finder {
  if (plural === USERS) {
    const me = session.me.user;
    const own: Choice = { id: me.id, label: userLabel(me), detail: `${me.email} (you)` };
    if (!isAdmin(session.me))
      return async (term) =>
        !term || `${me.displayName} ${me.email}`.toLowerCase().includes(term.toLowerCase()) ? [own] : [];
    return async (term, signal) => {
      const page = await api<{ items: UserView[] }>('GET', `/users${query({ q: term, limit: SUGGESTIONS })}`, {
        signal,
      });
      return page.items.map((user) => ({ id: user.id, label: userLabel(user), detail: user.email }));
    };
  }
  const target: EntityMeta | undefined = can(session.me, plural, 'view') ? session.entity(plural) : undefined;
  if (!target) return { unavailable: `You may not list ${session.entity(plural)?.label.toLowerCase() ?? plural}` };
  return async (term, signal) => {
    const field = titleField(target);
    const params =
      term && target.searchFields.length > 0
        ? { q: term, limit: SUGGESTIONS }
        : { limit: term ? 100 : SUGGESTIONS, sort: field ? field.name : undefined };
    const page = await api<ListPage>('GET', `/${target.plural}${query(params)}`, { signal });
    const lower = term.toLowerCase();
    // Without text search, the page is narrowed here by its label.
    const records =
      term && target.searchFields.length === 0
        ? page.items.filter((r) => recordTitle(target, r).toLowerCase().includes(lower)).slice(0, SUGGESTIONS)
        : page.items;
    return records.map((record) => ({ id: record.id, label: recordTitle(target, record), detail: record.id }));
  };
}

/**
 * A searchable picker of one referenced record (a combobox in the WAI-ARIA pattern): typing
 * searches the referenced entity (or the accounts), arrows move, Enter picks, Escape closes. The
 * value is the record's id; the input shows its label. Where the caller may list nothing to pick
 * from, the list says so, and an id pasted in is taken as it is.
 */
export function RefPicker({ id, label, value, plural, session, required, invalid, describedBy, onChange }: Props) {
  const listId = useId();
  const shown = useLabel(plural, value || undefined) ?? '';
  const [text, setText] = useState<string | undefined>(undefined);
  const [options, setOptions] = useState<Choice[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const request = useRef<AbortController | undefined>(undefined);
  const finder = finderFor(session, plural);

  // A value set from outside (a cleared filter, a loaded record) shows its label again.
  useEffect(() => setText(undefined), [value]);

  const search = async (term: string) => {
    request.current?.abort();
    if (typeof finder !== 'function') {
      setProblem(`${finder.unavailable}: paste an id of 24 hexadecimal characters.`);
      setOptions([]);
      setOpen(true);
      return;
    }
    const controller = new AbortController();
    request.current = controller;
    try {
      setOptions(await finder(term.trim(), controller.signal));
      setProblem(undefined);
      setOpen(true);
      setActive(-1);
    } catch (error) {
      if ((error as Error).name !== 'AbortError') {
        setProblem((error as Error).message);
        setOptions([]);
        setOpen(true);
      }
    }
  };

  const pick = (choice: Choice) => {
    // The label is known: the input shows it at once, without asking.
    rememberLabel(plural, choice.id, choice.label);
    onChange(choice.id);
    setText(undefined);
    setOpen(false);
  };
  const noun = plural === USERS ? 'users' : (session.entity(plural)?.label.toLowerCase() ?? plural);

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
        placeholder={`Search ${noun}`}
        value={text ?? shown}
        autocomplete="off"
        // The input's own text, not this render's: a fill focuses and types at once, and a search
        // for the text before it would answer last.
        onFocus={(e) => void search(value ? '' : e.currentTarget.value)}
        onInput={(e) => {
          const typed = e.currentTarget.value;
          setText(typed);
          if (!typed) onChange('');
          // An id pasted in is taken as it is: what a caller who may list nothing can give.
          else if (isRecordId(typed.trim())) onChange(typed.trim());
          void search(isRecordId(typed.trim()) ? '' : typed);
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
        onBlur={() =>
          setTimeout(() => {
            setOpen(false);
            // Text that picked nothing goes back to the value's label.
            setText(undefined);
          }, 150)
        }
      />
      {value && (
        <button
          type="button"
          class="link"
          aria-label={`Clear ${label}`}
          onClick={() => {
            onChange('');
            setText(undefined);
          }}
        >
          ×
        </button>
      )}
      <div id={listId} role="listbox" aria-label={label} hidden={!open} class="options">
        {options.length === 0 && <div class="muted">{problem ?? 'No matches'}</div>}
        {options.map((choice, index) => (
          <div
            key={choice.id}
            id={`${listId}-${index}`}
            role="option"
            tabIndex={-1}
            aria-selected={index === active}
            onMouseDown={(e) => {
              e.preventDefault();
              pick(choice);
            }}
          >
            {choice.label} {choice.detail && <span class="muted">{choice.detail}</span>}
          </div>
        ))}
      </div>
    </div>
  );
}
