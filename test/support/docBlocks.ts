import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

/** The text of a documentation page (a path from the repository's root). */
export const docPage = (path: string): string => readFileSync(join(repoRoot, path), 'utf8');

/**
 * The code blocks of a page marked `<!-- marker -->` or `<!-- marker: path -->` just before them,
 * in order: a marked file's block comes back with its path as the first line.
 */
export function blocksAfter(page: string, marker: string): string[] {
  return [...page.matchAll(new RegExp(`<!-- ${marker}(?:: ([^ ]+))? -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (m) => (m[1] ? `${m[1]}\n${m[2]}` : m[2]),
  );
}
