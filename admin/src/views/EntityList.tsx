import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, query } from '../api.js';
import { download, toCsv } from '../csv.js';
import { FilterInput } from '../fields/FilterInput.js';
import { formatValue } from '../fields/formatValue.js';
import { RefValue } from '../fields/RefLink.js';
import { type EntityMeta, type FieldMeta, type ListPage, titleField } from '../model.js';
import { can, isAdmin } from '../permissions.js';
import type { Session } from '../session.js';
import { Conditions, conditionsOf } from './Conditions.js';
import { EndpointActions } from './EndpointActions.js';
import { ImportRecords } from './ImportRecords.js';
import { MediaUpload } from './MediaUpload.js';
import { NotAllowed, Problem } from './Problem.js';

const PAGE_SIZES = [10, 25, 50, 100, 200];
/** Rows an export reads at most (in pages of 200), so one click cannot pull a whole large table. */
export const MAX_EXPORT_ROWS = 10_000;
const LIST_KEYS = ['q', 'page', 'limit', 'sort', 'includeArchived', 'trash'];

function defaultColumns(entity: EntityMeta): string[] {
  const title = titleField(entity);
  const rest = entity.fields
    .filter((f) => f !== title && !f.readOnly && !['object', 'any', 'encryptedKey'].includes(f.type))
    .filter((f) => !(f.type === 'string' && f.search))
    .slice(0, 4)
    .map((f) => f.name);
  return [...(title ? [title.name] : []), ...rest, 'updatedAt'];
}

function columnsKey(plural: string): string {
  return `entigen-admin-columns:${plural}`;
}

function savedColumns(entity: EntityMeta): string[] {
  try {
    const saved = JSON.parse(localStorage.getItem(columnsKey(entity.plural)) ?? 'null');
    if (Array.isArray(saved)) {
      const names = saved.filter((n) => entity.fields.some((f) => f.name === n));
      if (names.length > 0) return names;
    }
  } catch {
    // A damaged setting falls back to the defaults.
  }
  return defaultColumns(entity);
}

export function EntityList({ session, plural }: { session: Session; plural: string }) {
  const entity = session.entity(plural);
  if (!entity || !can(session.me, plural, 'view'))
    return <NotAllowed what={`view ${entity?.label.toLowerCase() ?? plural}, or it does not exist`} />;
  return <ListOf session={session} entity={entity} />;
}

function ListOf({ session, entity }: { session: Session; entity: EntityMeta }) {
  const location = useLocation();
  const params = location.query;
  // The page shown and the query it answers: while the next one loads, the last stays, marked busy.
  const [page, setPage] = useState<ListPage | undefined>(undefined);
  const [shownFor, setShownFor] = useState<Record<string, string | string[]>>({});
  const [failure, setFailure] = useState<unknown>(undefined);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [columns, setColumns] = useState<string[]>(() => savedColumns(entity));
  const [status, setStatus] = useState<string | undefined>(undefined);
  const [reload, setReload] = useState(0);
  const [search, setSearch] = useState(params.q ?? '');
  const fields = useMemo(() => new Map(entity.fields.map((f) => [f.name, f])), [entity]);
  const filterFields = entity.filters.map((name) => fields.get(name)).filter((f): f is FieldMeta => !!f);

  const apiParams = useMemo(() => {
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(params)) {
      if (LIST_KEYS.includes(name) || entity.filters.includes(name)) out[name] = value;
      else if (conditionsOf({ [name]: value }, entity.filters).length > 0) out[name] = value;
    }
    out.limit ??= '25';
    return out;
  }, [location.url, entity.plural]);

  useEffect(() => {
    setSearch(params.q ?? '');
  }, [params.q]);

  useEffect(() => {
    const controller = new AbortController();
    setFailure(undefined);
    api<ListPage>('GET', `/${entity.plural}${query(apiParams)}`, { signal: controller.signal })
      .then((answer) => {
        setPage(answer);
        setShownFor(apiParams);
        setSelected(new Set());
      })
      .catch((error) => {
        if ((error as Error).name !== 'AbortError') setFailure(error);
      });
    return () => controller.abort();
  }, [entity.plural, JSON.stringify(apiParams), reload]);

  const navigate = (changes: Record<string, string | undefined>, resetPage = true) => {
    const next: Record<string, string | undefined> = {
      ...apiParams,
      ...(resetPage ? { page: undefined } : {}),
      ...changes,
    };
    location.route(`/admin/e/${entity.plural}${query(next)}`);
  };

  const sort = params.sort ?? '';
  const toggleSort = (name: string) => navigate({ sort: sort === name ? `-${name}` : name });
  const currentPage = Number(shownFor.page ?? 1);
  const loading = JSON.stringify(shownFor) !== JSON.stringify(apiParams);
  const totalPages = page?.totalPages ?? 1;
  const canEdit = can(session.me, entity.plural, 'edit');
  const canDelete = can(session.me, entity.plural, 'delete');
  // The trash view (?trash=only): what was deleted, to restore or delete for good.
  const inTrash = Boolean(entity.trash) && params.trash === 'only';
  const archivable = entity.ownership === 'owned' && canEdit && !inTrash;
  const chooseColumns = (name: string, on: boolean) => {
    const next = on ? [...columns, name] : columns.filter((c) => c !== name);
    setColumns(next);
    localStorage.setItem(columnsKey(entity.plural), JSON.stringify(next));
  };

  const bulk = async (action: 'archive' | 'delete' | 'restoreFromTrash' | 'deleteForGood') => {
    const ids = [...selected];
    const [verb, done] = {
      archive: ['Archive', 'Archived'],
      delete: entity.trash ? ['Move to trash', 'Moved to the trash'] : ['Delete', 'Deleted'],
      restoreFromTrash: ['Restore', 'Restored'],
      deleteForGood: ['Delete for good', 'Deleted for good'],
    }[action];
    const what = `${ids.length} selected ${ids.length === 1 ? 'record' : 'records'}`;
    const warning = action === 'deleteForGood' ? ' This cannot be undone.' : '';
    if (!confirm(`${verb}: ${what}?${warning}`)) return;
    const failures: string[] = [];
    for (const [index, id] of ids.entries()) {
      setStatus(`${verb}: ${index + 1} of ${ids.length}…`);
      try {
        if (action === 'archive') await api('POST', `/${entity.plural}/${id}/archive`);
        else if (action === 'restoreFromTrash') await api('POST', `/${entity.plural}/${id}/restore-from-trash`);
        else if (action === 'deleteForGood') await api('DELETE', `/${entity.plural}/${id}?permanent=true`);
        else await api('DELETE', `/${entity.plural}/${id}`);
      } catch (error) {
        failures.push(`${id}: ${(error as Error).message}`);
      }
    }
    setStatus(
      failures.length === 0
        ? `${done} ${ids.length} ${ids.length === 1 ? 'record' : 'records'}.`
        : `${ids.length - failures.length} done, ${failures.length} failed: ${failures.join('; ')}`,
    );
    setReload(reload + 1);
  };

  const exportCsv = async () => {
    const rows: string[][] = [];
    const shown = columns.map((c) => fields.get(c)!).filter(Boolean);
    try {
      for (let number = 1; rows.length < MAX_EXPORT_ROWS; number++) {
        const chunk = await api<ListPage>(
          'GET',
          `/${entity.plural}${query({ ...apiParams, page: String(number), limit: '200', cursor: undefined })}`,
        );
        for (const record of chunk.items)
          rows.push(['id', ...columns].map((c) => formatValue(fields.get(c), record[c])));
        setStatus(`Exporting: ${rows.length} of ${chunk.totalCount ?? rows.length} rows…`);
        if (chunk.items.length < 200 || number >= (chunk.totalPages ?? number)) break;
      }
      download(`${entity.plural}.csv`, toCsv(['id', ...shown.map((f) => f.label)], rows.slice(0, MAX_EXPORT_ROWS)));
      setStatus(
        `Exported ${Math.min(rows.length, MAX_EXPORT_ROWS)} rows${rows.length >= MAX_EXPORT_ROWS ? ` (the first ${MAX_EXPORT_ROWS})` : ''}.`,
      );
    } catch (error) {
      setStatus(`Export failed: ${(error as Error).message}`);
    }
  };

  return (
    <section aria-labelledby="list-title">
      <div class="heading">
        <h1 id="list-title">
          {entity.label}
          {inTrash ? ': trash' : ''}
        </h1>
        {!inTrash && can(session.me, entity.plural, 'create') && (
          <a class="button primary" href={`/admin/e/${entity.plural}/new`}>
            New {entity.name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}
          </a>
        )}
      </div>
      {entity.trash && canDelete && (
        <nav class="tabs" aria-label="Records or trash">
          <a href={`/admin/e/${entity.plural}`} aria-current={inTrash ? undefined : 'page'}>
            Records
          </a>
          <a href={`/admin/e/${entity.plural}?trash=only`} aria-current={inTrash ? 'page' : undefined}>
            Trash
          </a>
          {inTrash && (
            <span class="muted">Deleted records stay here for {entity.trash.retention}, then they are purged.</span>
          )}
        </nav>
      )}
      {!inTrash && <EndpointActions session={session} entity={entity} onRecord={() => setReload(reload + 1)} />}
      {entity.plural === 'mediaAssets' && can(session.me, entity.plural, 'create') && (
        <MediaUpload onUploaded={(id) => location.route(`/admin/e/${entity.plural}/${id}`)} />
      )}
      {isAdmin(session.me) && entity.plural !== 'mediaAssets' && (
        <ImportRecords plural={entity.plural} label={entity.label} onImported={() => setReload(reload + 1)} />
      )}
      <form
        class="toolbar"
        aria-label="Search and filters"
        onSubmit={(e) => {
          e.preventDefault();
          navigate({ q: search || undefined });
        }}
      >
        {entity.searchFields.length > 0 && (
          <label>
            Search
            <input type="search" name="q" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
          </label>
        )}
        {filterFields.map((field) => (
          <FilterInput
            key={field.name}
            field={field}
            session={session}
            value={params[field.name] ?? ''}
            onChange={(value) => navigate({ [field.name]: value || undefined })}
          />
        ))}
        {entity.ownership === 'owned' && !inTrash && (
          <label class="check">
            <input
              type="checkbox"
              checked={params.includeArchived === 'true'}
              onChange={(e) => navigate({ includeArchived: e.currentTarget.checked ? 'true' : undefined })}
            />
            Show archived
          </label>
        )}
        {entity.searchFields.length > 0 && <button type="submit">Search</button>}
      </form>
      <Conditions
        session={session}
        fields={filterFields}
        conditions={conditionsOf(params, entity.filters)}
        onAdd={(c) => navigate({ [`${c.field}[${c.operator}]`]: c.value })}
        onRemove={(c) => navigate({ [`${c.field}[${c.operator}]`]: undefined })}
      />
      <div class="toolbar secondary">
        <details class="columns">
          <summary>Columns</summary>
          <fieldset>
            <legend class="visually-hidden">Columns to show</legend>
            {entity.fields.map((field) => (
              <label key={field.name} class="check">
                <input
                  type="checkbox"
                  checked={columns.includes(field.name)}
                  onChange={(e) => chooseColumns(field.name, e.currentTarget.checked)}
                />
                {field.label}
              </label>
            ))}
          </fieldset>
        </details>
        <button type="button" onClick={() => void exportCsv()}>
          Export CSV
        </button>
        {selected.size > 0 && archivable && (
          <button type="button" onClick={() => void bulk('archive')}>
            Archive selected ({selected.size})
          </button>
        )}
        {selected.size > 0 && canDelete && !inTrash && (
          <button type="button" class="danger" onClick={() => void bulk('delete')}>
            {entity.trash ? 'Move to trash' : 'Delete selected'} ({selected.size})
          </button>
        )}
        {selected.size > 0 && inTrash && (
          <button type="button" onClick={() => void bulk('restoreFromTrash')}>
            Restore selected ({selected.size})
          </button>
        )}
        {selected.size > 0 && inTrash && can(session.me, entity.plural, 'purge') && (
          <button type="button" class="danger" onClick={() => void bulk('deleteForGood')}>
            Delete for good ({selected.size})
          </button>
        )}
        <span role="status" class="muted">
          {status}
        </span>
      </div>
      {failure ? (
        <Problem error={failure} />
      ) : !page ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <div class="table-wrap">
            <table aria-busy={loading}>
              <caption class="visually-hidden">
                {entity.label}, page {currentPage} of {totalPages}
              </caption>
              <thead>
                <tr>
                  <th scope="col">
                    <input
                      type="checkbox"
                      aria-label="Select all on this page"
                      checked={page.items.length > 0 && selected.size === page.items.length}
                      onChange={(e) =>
                        setSelected(e.currentTarget.checked ? new Set(page.items.map((r) => r.id)) : new Set())
                      }
                    />
                  </th>
                  {columns.map((name) => {
                    const field = fields.get(name)!;
                    const direction = sort === name ? 'ascending' : sort === `-${name}` ? 'descending' : undefined;
                    return (
                      <th key={name} scope="col" aria-sort={direction ?? 'none'}>
                        <button type="button" class="sort" onClick={() => toggleSort(name)}>
                          {field?.label ?? name}
                          <span aria-hidden="true">
                            {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
                          </span>
                        </button>
                      </th>
                    );
                  })}
                </tr>
              </thead>
              <tbody>
                {page.items.length === 0 && (
                  <tr>
                    <td colSpan={columns.length + 1} class="muted">
                      No records match.
                    </td>
                  </tr>
                )}
                {page.items.map((record) => (
                  <tr key={record.id} class={record.archivedAt ? 'archived' : undefined}>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Select ${record.id}`}
                        checked={selected.has(record.id)}
                        onChange={(e) => {
                          const next = new Set(selected);
                          if (e.currentTarget.checked) next.add(record.id);
                          else next.delete(record.id);
                          setSelected(next);
                        }}
                      />
                    </td>
                    {columns.map((name, index) => (
                      <td key={name}>
                        {index === 0 && inTrash ? (
                          formatValue(fields.get(name), record[name]) || record.id
                        ) : index === 0 ? (
                          <a href={`/admin/e/${entity.plural}/${record.id}`}>
                            {formatValue(fields.get(name), record[name]) || record.id}
                          </a>
                        ) : fields.get(name)?.ref ? (
                          <RefValue session={session} plural={fields.get(name)!.ref!} value={record[name]} />
                        ) : (
                          formatValue(fields.get(name), record[name])
                        )}
                        {index === 0 && record.archivedAt && <span class="badge">Archived</span>}
                        {index === 0 && record.trashedAt && (
                          <span class="badge">Trashed {formatValue(fields.get('trashedAt'), record.trashedAt)}</span>
                        )}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Pages">
            <button
              type="button"
              disabled={currentPage <= 1}
              onClick={() => navigate({ page: String(currentPage - 1) }, false)}
            >
              Previous
            </button>
            <span>
              Page {currentPage} of {Math.max(totalPages, 1)} · {page.totalCount ?? page.items.length} records
            </span>
            <button
              type="button"
              disabled={currentPage >= totalPages}
              onClick={() => navigate({ page: String(currentPage + 1) }, false)}
            >
              Next
            </button>
            <label class="inline">
              Rows per page
              <select value={apiParams.limit as string} onChange={(e) => navigate({ limit: e.currentTarget.value })}>
                {PAGE_SIZES.map((size) => (
                  <option key={size} value={String(size)}>
                    {size}
                  </option>
                ))}
              </select>
            </label>
          </nav>
        </>
      )}
    </section>
  );
}
