const NUL = '\u0000';
/** A UTF-16 surrogate not in a pair: JSON can carry one, UTF-8 and PostgreSQL's jsonb cannot. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why no store can keep this text, or undefined when every store can: PostgreSQL text and jsonb
 * refuse the NUL character, and UTF-8 has no lone surrogates.
 */
export function unstorableText(text: string): string | undefined {
  if (text.includes(NUL)) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it holds a lone surrogate)';
  return undefined;
}
