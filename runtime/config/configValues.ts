// The value grammars the config's sections share: durations and flags from the environment.

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30s`, `5m`, `7d`: a whole number and a unit (ms, s, m, h, d). */
export function parseDuration(text: string): number {
  const match = /^([1-9]\d*)(ms|s|m|h|d)$/.exec(text);
  if (!match) throw new Error(`invalid duration "${text}"; use a number and ms, s, m, h or d`);
  return Number(match[1]) * UNITS[match[2]];
}

/** A flag from the environment: `true` or `false`; empty or unset: undefined. */
export function booleanFromEnv(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  if (value !== 'true' && value !== 'false') throw new Error(`${name} must be true or false, not "${value}"`);
  return value === 'true';
}
