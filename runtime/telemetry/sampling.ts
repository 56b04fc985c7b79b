/**
 * How new traces are decided: the OpenTelemetry TraceIdRatioBased algorithm on a trace id's four
 * 32-bit words, before the id is written out, so a trace left out costs four random numbers.
 */

/** Which traces are kept, as OTEL_TRACES_SAMPLER names it, decided on the trace id's four words. */
export interface SamplingPlan {
  /** A span with a parent follows the parent's sampled flag (the `parentbased_*` samplers). */
  parentBased: boolean;
  /** The share of new traces kept (TraceIdRatioBased on the id; 1 is always, 0 never). */
  rootRatio: number;
}

/** A 32-bit word as the eight hex digits of an id. */
export function hexWord(word: number): string {
  return (word >>> 0).toString(16).padStart(8, '0');
}

/** A random 32-bit word, as the SDK's RandomIdGenerator draws each of an id's. */
export function randomWord(): number {
  return (Math.random() * 2 ** 32) >>> 0;
}

/** The words of the trace id `drawKeptTrace` drew last. */
export const DRAWN = new Uint32Array(4);

/**
 * Draws a new trace id's four words into DRAWN and says whether TraceIdRatioBased keeps it (the
 * XOR of the words below `bound`): a trace left out costs four random numbers and no id.
 */
export function drawKeptTrace(bound: number): boolean {
  if (bound === 0) return false;
  const first = randomWord();
  const second = randomWord();
  const third = randomWord();
  // An id of zeros is invalid.
  const fourth = (first | second | third) === 0 ? randomWord() || 1 : randomWord();
  if ((first ^ second ^ third ^ fourth) >>> 0 >= bound) return false;
  DRAWN[0] = first;
  DRAWN[1] = second;
  DRAWN[2] = third;
  DRAWN[3] = fourth;
  return true;
}

/** The bound TraceIdRatioBased compares the XOR of a trace id's words with. */
export function ratioBound(ratio: number): number {
  const share = Math.min(Math.max(ratio, 0), 1) || 0;
  return share === 1 ? 0x100000000 : Math.floor(share * 0xffffffff);
}
