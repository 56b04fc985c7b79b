import { useState } from 'preact/hooks';

/**
 * One user action at a time on a page: run it, say what happened (a status line), or keep the
 * failure to show; then reload what the page lists.
 */
export function useAction(reload?: () => Promise<unknown>) {
  const [status, setStatus] = useState('');
  const [failure, setFailure] = useState<unknown>(undefined);
  const run = async (done: string, call: () => Promise<unknown>) => {
    setFailure(undefined);
    try {
      await call();
      setStatus(done);
      await reload?.();
    } catch (error) {
      setFailure(error);
    }
  };
  return { status, setStatus, failure, setFailure, run };
}
