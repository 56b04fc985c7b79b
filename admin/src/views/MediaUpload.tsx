import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Problem } from './Problem.js';

/** Media assets: a file (and its alt text) to POST /mediaAssets/upload, the one multipart route. */
export function MediaUpload({ onUploaded }: { onUploaded(id: string): void }) {
  const [failure, setFailure] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setBusy(true);
    setFailure(undefined);
    try {
      const created = await api<{ id: string }>('POST', '/mediaAssets/upload', { form: new FormData(form) });
      form.reset();
      onUploaded(created.id);
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="panel">
      <summary>Upload a file</summary>
      <form class="record-form" onSubmit={submit} aria-label="Upload a file">
        {failure !== undefined && <Problem error={failure} title="The file was not uploaded" />}
        <div class="field">
          <label for="upload-file">File</label>
          <input id="upload-file" name="file" type="file" required />
        </div>
        <div class="field">
          <label for="upload-alt">Alternative text (for images)</label>
          <input id="upload-alt" name="altText" maxLength={500} />
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Upload
          </button>
        </div>
      </form>
    </details>
  );
}
