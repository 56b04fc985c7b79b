import type { Caller } from '../context/caller.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by correlationId(): the request's id, echoed in x-correlation-id. */
      correlationId: string;
      /** Set by authenticate(): who is asking. */
      caller: Caller;
    }
  }
}
