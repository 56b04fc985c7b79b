import { type StoreCall, StoreWrapper } from './storeWrapper.js';
import type { Store } from './types.js';

/** Receives the duration of each store call. */
export type StoreObserver = (store: Store['kind'], operation: string, outcome: 'ok' | 'error', seconds: number) => void;

/**
 * A store that times every call for the operator metrics and otherwise passes it through; the
 * store of a transaction is measured too.
 */
export class MeasuredStore extends StoreWrapper {
  constructor(
    inner: Store,
    private readonly observe: StoreObserver,
  ) {
    super(inner);
  }

  protected override async around<T>(
    call: StoreCall,
    _collection: string | undefined,
    run: () => Promise<T>,
  ): Promise<T> {
    const started = performance.now();
    try {
      const result = await run();
      this.observe(this.inner.kind, call, 'ok', (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      this.observe(this.inner.kind, call, 'error', (performance.now() - started) / 1000);
      throw error;
    }
  }

  protected wrapTransaction(tx: Store): Store {
    return new MeasuredStore(tx, this.observe);
  }
}
