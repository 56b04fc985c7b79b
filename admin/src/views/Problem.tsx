import { ApiFailure } from '../api.js';

/** A failed request as the user should read it: what happened, and the id to quote to an operator. */
export function Problem({ error, title }: { error: unknown; title?: string }) {
  const failure = error instanceof ApiFailure ? error : undefined;
  const heading =
    title ??
    (failure?.status === 403
      ? 'You do not have permission for this'
      : failure?.status === 404
        ? 'Not found'
        : 'Something went wrong');
  return (
    <div class="problem" role="alert">
      <strong>{heading}</strong>
      <p>{failure ? failure.message : String((error as Error)?.message ?? error)}</p>
      {failure?.correlationId && (
        <p class="muted">
          Correlation id: <code data-testid="correlation-id">{failure.correlationId}</code>
        </p>
      )}
    </div>
  );
}

/** What the console says where the caller's permissions do not reach (the server would answer 403). */
export function NotAllowed({ what }: { what: string }) {
  return <Problem title="You do not have permission for this" error={new Error(`You may not ${what}.`)} />;
}

/** What the last action on a page did: its status line, or its failure. */
export function Outcome({ status, failure }: { status: string; failure: unknown }) {
  return (
    <>
      <p role="status" class="muted">
        {status}
      </p>
      {failure !== undefined && <Problem error={failure} />}
    </>
  );
}
