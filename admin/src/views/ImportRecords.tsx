import { useState } from 'preact/hooks';
import { api } from '../api.js';
import type { ImportOutcome } from '../apiTypes.js';
import { Problem } from './Problem.js';

/**
 * Administrators: records from a JSON-lines or CSV file, through POST /import/{plural}. "Check"
 * runs the whole import and rolls it back, so the first refused lines show before anything is
 * written; "Import" writes it, all or nothing unless "skip refused lines" is ticked.
 */
export function ImportRecords({ plural, label, onImported }: { plural: string; label: string; onImported(): void }) {
  const [failure, setFailure] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<ImportOutcome | undefined>(undefined);
  const run = async (form: HTMLFormElement, dryRun: boolean) => {
    const data = new FormData(form);
    const continueOnError = data.get('continueOnError') === 'on';
    data.delete('continueOnError');
    setBusy(true);
    setFailure(undefined);
    setOutcome(undefined);
    try {
      const params = new URLSearchParams({ dryRun: String(dryRun), continueOnError: String(continueOnError) });
      const answer = await api<ImportOutcome>('POST', `/import/${plural}?${params}`, { form: data });
      setOutcome(answer);
      if (answer.written) onImported();
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };
  const refused = outcome ? outcome.errors.length + outcome.moreErrors : 0;
  return (
    <details class="panel">
      <summary>Import {label.toLowerCase()} from a file</summary>
      <form
        class="record-form"
        aria-label={`Import ${label.toLowerCase()}`}
        onSubmit={(event) => {
          event.preventDefault();
          const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
          void run(event.currentTarget as HTMLFormElement, submitter?.value !== 'import');
        }}
      >
        {failure !== undefined && <Problem error={failure} title="The file was not imported" />}
        <div class="field">
          <label for="import-file">JSON lines (.jsonl) or CSV (.csv) file</label>
          <input id="import-file" name="file" type="file" accept=".jsonl,.json,.csv" required />
        </div>
        <div class="field">
          <label>
            <input name="continueOnError" type="checkbox" /> Skip refused lines and import the rest
          </label>
        </div>
        <div class="actions">
          <button type="submit" value="check" disabled={busy}>
            Check
          </button>
          <button type="submit" value="import" class="primary" disabled={busy}>
            Import
          </button>
        </div>
        {outcome && (
          <div role="status">
            <p>
              {outcome.dryRun ? 'Would import' : 'Imported'} {outcome.imported} of {outcome.lines} lines
              {refused > 0 ? `; ${refused} refused${outcome.written ? '' : ', nothing was written'}` : ''}.
            </p>
            {outcome.errors.length > 0 && (
              <table>
                <caption>
                  {outcome.moreErrors > 0
                    ? `The first ${outcome.errors.length} refused lines of ${refused}`
                    : 'Refused lines'}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Line</th>
                    <th scope="col">What is wrong</th>
                  </tr>
                </thead>
                <tbody>
                  {outcome.errors.map((error) => (
                    <tr key={error.line}>
                      <td>{error.line}</td>
                      <td>{error.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
        )}
      </form>
    </details>
  );
}
