import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiFailure, api } from '../api.js';
import { type Draft, FieldInput, fromDraft, toDraft } from '../fields/FieldInput.js';
import { type EntityMeta, editableFields, type FieldMeta, onRecord, type RecordDoc, recordTitle } from '../model.js';
import { can } from '../permissions.js';
import type { Session } from '../session.js';
import { NotAllowed, Problem } from './Problem.js';

/** Create (no id) or edit one record; the server's field errors appear beside their fields. */
export function RecordForm({ session, plural, id }: { session: Session; plural: string; id?: string }) {
  const entity = session.entity(plural);
  const action = id ? 'edit' : 'create';
  if (!entity || !can(session.me, plural, action))
    return <NotAllowed what={`${action} ${entity?.label.toLowerCase() ?? plural}`} />;
  return <FormOf session={session} entity={entity} id={id} />;
}

/**
 * The form's inputs: one per editable field, a localized one per locale (named `title.de`, as
 * the server names a locale's errors), so the locales of a field are edited side by side.
 */
interface FormInput {
  field: FieldMeta;
  /** A localized field's input: the field and the locale. */
  of?: { name: string; locale: string };
}

function formInputs(entity: EntityMeta): FormInput[] {
  return editableFields(entity).flatMap((field): FormInput[] => {
    const localized = field.localized;
    if (!localized) return [{ field }];
    return localized.locales.map((locale) => ({
      field: {
        ...field,
        name: `${field.name}.${locale}`,
        label: `${field.label} (${locale})`,
        required: field.required && localized.required.includes(locale),
        default: locale === localized.defaultLocale ? field.default : null,
      },
      of: { name: field.name, locale },
    }));
  });
}

/** What an input holds of a record: a localized field's value in the input's locale. */
function inputValue(input: FormInput, record: RecordDoc | undefined): unknown {
  if (!record) return input.field.default;
  if (!input.of) return record[input.field.name];
  const byLocale = record[input.of.name] as Record<string, unknown> | null | undefined;
  return byLocale && typeof byLocale === 'object' ? byLocale[input.of.locale] : undefined;
}

function initialDraft(entity: EntityMeta, record: RecordDoc | undefined): Draft {
  const draft: Draft = {};
  for (const input of formInputs(entity)) draft[input.field.name] = toDraft(input.field, inputValue(input, record));
  return draft;
}

function FormOf({ session, entity: declared, id }: { session: Session; entity: EntityMeta; id?: string }) {
  const { route } = useLocation();
  const [record, setRecord] = useState<RecordDoc | undefined>(undefined);
  const [draft, setDraft] = useState<Draft | undefined>(id ? undefined : initialDraft(declared, undefined));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const entity = onRecord(declared, record, session.me.user.id);
  const inputs = formInputs(entity);

  useEffect(() => {
    if (!id) return;
    // Every locale of localized fields, to edit them side by side.
    const locales = editableFields(entity).some((f) => f.localized) ? '?locale=*' : '';
    api<RecordDoc>('GET', `/${entity.plural}/${encodeURIComponent(id)}${locales}`)
      .then((loaded) => {
        setRecord(loaded);
        setDraft(initialDraft(onRecord(declared, loaded, session.me.user.id), loaded));
      })
      .catch(setFailure);
  }, [entity.plural, id]);

  if (!draft) return failure ? <Problem error={failure} /> : <p class="loading">Loading…</p>;

  const submit = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = {};
    const local: Record<string, string> = {};
    const original = record ? initialDraft(entity, record) : undefined;
    for (const { field, of } of inputs) {
      const value = draft[field.name];
      // An edit sends what changed; an empty write-only key keeps the stored one.
      if (original && JSON.stringify(original[field.name]) === JSON.stringify(value)) continue;
      if (field.type === 'encryptedKey' && value === '') continue;
      try {
        const parsed = fromDraft(field, value);
        if (parsed === null && !record) continue;
        // A localized field is sent as the changed locales, keyed by locale (null clears one).
        if (of) body[of.name] = { ...(body[of.name] as Record<string, unknown> | undefined), [of.locale]: parsed };
        else body[field.name] = parsed;
      } catch (error) {
        local[field.name] = (error as Error).message;
      }
    }
    setErrors(local);
    setFailure(undefined);
    if (Object.keys(local).length > 0) return;
    setBusy(true);
    try {
      const saved = record
        ? await api<RecordDoc>('PATCH', `/${entity.plural}/${record.id}`, { body })
        : await api<RecordDoc>('POST', `/${entity.plural}`, { body });
      route(`/admin/e/${entity.plural}/${saved.id}`);
    } catch (error) {
      if (error instanceof ApiFailure && Object.keys(error.details).length > 0) setErrors(error.details);
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };

  const title = record
    ? `Edit ${recordTitle(entity, record)}`
    : `New ${entity.name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}`;
  const status = entity.statusTransitions && record ? String(record.status ?? '') : undefined;
  return (
    <section aria-labelledby="form-title">
      <p class="crumbs">
        <a href={`/admin/e/${entity.plural}`}>{entity.label}</a>
      </p>
      <h1 id="form-title">{title}</h1>
      {failure !== undefined && <Problem error={failure} title="The record was not saved" />}
      <form class="record-form" onSubmit={submit} noValidate>
        {inputs.map(({ field, of }, index) => {
          // The locales of one field stand side by side, under its name.
          if (of && inputs[index - 1]?.of?.name === of.name) return null;
          if (of) {
            const group = inputs.filter((input) => input.of?.name === of.name);
            const declared = editableFields(entity).find((f) => f.name === of.name)!;
            return (
              <fieldset key={of.name} class="localized">
                <legend>{declared.label}</legend>
                <div class="locales">
                  {group.map((input) => (
                    <FieldInput
                      key={input.field.name}
                      field={input.field}
                      value={draft[input.field.name]}
                      error={errors[input.field.name]}
                      session={session}
                      onChange={(value) => setDraft({ ...draft, [input.field.name]: value })}
                    />
                  ))}
                </div>
                {errors[of.name] && <p class="field-error">{errors[of.name]}</p>}
              </fieldset>
            );
          }
          let meta = field;
          // Content status: only the moves the server allows from the stored status.
          if (field.name === 'status' && status && entity.statusTransitions && field.values) {
            const allowed = [status, ...(entity.statusTransitions[status] ?? [])];
            meta = { ...field, required: true, values: field.values.filter((v) => allowed.includes(v.key)) };
          }
          return (
            <FieldInput
              key={field.name}
              field={meta}
              value={draft[field.name]}
              error={errors[field.name]}
              nestedErrors={Object.fromEntries(
                Object.entries(errors)
                  .filter(([key]) => key.startsWith(`${field.name}.`))
                  .map(([key, message]) => [key.slice(field.name.length + 1), message]),
              )}
              session={session}
              isSet={record ? record[field.name] !== null && record[field.name] !== undefined : false}
              onChange={(value) => setDraft({ ...draft, [field.name]: value })}
            />
          );
        })}
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            {record ? 'Save changes' : 'Create'}
          </button>
          <a class="button" href={record ? `/admin/e/${entity.plural}/${record.id}` : `/admin/e/${entity.plural}`}>
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}
