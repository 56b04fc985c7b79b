/**
 * The allowed word `word` was most likely meant to be, for a "did you mean" hint: one a typo or
 * two away (letters swapped, missing, extra or wrong, case aside), or one `word` starts with
 * (`integer` for `int`); undefined when none is that close.
 */
export function nearestWord(word: string, allowed: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of allowed) {
    const lower = candidate.toLowerCase();
    if (lower === typed) return candidate;
    const distance = typoDistance(typed, lower);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined && bestDistance <= Math.max(1, Math.floor(Math.max(typed.length, best.length) / 3)))
    return best;
  // A longer spelling of an allowed word (`integer`, `bool`ean aside: the allowed word is the stem).
  return allowed.find((candidate) => candidate.length >= 3 && typed.startsWith(candidate.toLowerCase()));
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function typoDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
