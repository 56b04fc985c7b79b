import { type Token, tokenize } from './scanHookModule.js';

/**
 * The names a module exports, read without running it: `export [async] function name`,
 * `export const|let|var|class name`, `export { a, b as c }`, and the keys of
 * `export default { a, b: ..., c() {} }`. `complete` is false when the module exports what
 * a scanner cannot name (`export *`, a default export that is not an object literal).
 */
export function scanExports(text: string): { names: Set<string>; complete: boolean } {
  const tokens = tokenize(text);
  const names = new Set<string>();
  let complete = true;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i].kind !== 'ident' || tokens[i].value !== 'export') continue;
    let next = tokens[i + 1];
    if (next?.value === 'async') next = tokens[i + 2];
    if (!next) break;
    if (next.value === 'function' || next.value === 'class' || ['const', 'let', 'var'].includes(next.value)) {
      let at = tokens.indexOf(next) + 1;
      if (tokens[at]?.value === '*') at++;
      if (tokens[at]?.kind === 'ident') names.add(tokens[at].value);
    } else if (next.value === '{') {
      for (const name of listedNames(tokens, tokens.indexOf(next))) names.add(name);
    } else if (next.value === 'default') {
      const value = tokens[tokens.indexOf(next) + 1];
      if (value?.value === '{') for (const name of objectKeys(tokens, tokens.indexOf(value))) names.add(name);
      else if (!(value?.value === 'async' || value?.value === 'function' || value?.value === 'class')) complete = false;
    } else if (next.value === '*') complete = false;
  }
  return { names, complete };
}

/** `{ a, b as c }` from its opening brace: a and c. */
function listedNames(tokens: Token[], open: number): string[] {
  const out: string[] = [];
  for (let i = open + 1; i < tokens.length && tokens[i].value !== '}'; i++) {
    if (tokens[i].kind !== 'ident') continue;
    // `b as c` exports c; `type T` exports a type, not a handler.
    if (tokens[i + 1]?.value === 'as' || tokens[i].value === 'as' || tokens[i].value === 'type') continue;
    out.push(tokens[i].value);
  }
  return out;
}

/** The top-level keys of an object literal from its opening brace. */
function objectKeys(tokens: Token[], open: number): string[] {
  const out: string[] = [];
  let depth = 0;
  let entryStart = true;
  for (let i = open + 1; i < tokens.length; i++) {
    const token = tokens[i];
    if (depth === 0 && entryStart) {
      let key = token;
      while (key && key.kind === 'ident' && key.value === 'async' && tokens[i + 1]?.kind === 'ident') key = tokens[++i];
      if (key && (key.kind === 'ident' || key.kind === 'string')) out.push(key.value);
      entryStart = false;
    }
    if (['(', '[', '{'].includes(token.value)) depth++;
    else if ([')', ']', '}'].includes(token.value)) {
      if (depth === 0) break;
      depth--;
    } else if (token.value === ',' && depth === 0) entryStart = true;
  }
  return out;
}
