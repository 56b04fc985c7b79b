/**
 * Reads a hook module without running it: the entity named by `defineHooks('<plural>', { ... })`
 * and the top-level keys of that object, each with its position. A small scanner, not a parser:
 * it skips comments, strings and template literals, and counts brackets. What it cannot find is
 * reported as "not found"; the server checks the loaded module again at start.
 */
export interface ScannedHookModule {
  /** The first argument of defineHooks, when it is a string literal. */
  plural?: { value: string; line: number; col: number };
  keys: { name: string; line: number; col: number }[];
  /** Where defineHooks is called, or undefined when the module never calls it. */
  call?: { line: number; col: number };
}

export type Token = { kind: 'ident' | 'string' | 'punct'; value: string; at: number };

export function scanHookModule(text: string): ScannedHookModule {
  const tokens = tokenize(text);
  const position = (at: number) => {
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    return { line, col: at - before.lastIndexOf('\n') };
  };
  const start = tokens.findIndex(
    (t, i) => t.kind === 'ident' && t.value === 'defineHooks' && tokens[i + 1]?.value === '(',
  );
  if (start < 0) return { keys: [] };
  const result: ScannedHookModule = { keys: [], call: position(tokens[start].at) };
  let i = start + 2;
  if (tokens[i]?.kind === 'string') {
    result.plural = { value: tokens[i].value, ...position(tokens[i].at) };
    i++;
  }
  if (tokens[i]?.value !== ',' || tokens[i + 1]?.value !== '{') return result;
  i += 2;
  let depth = 0;
  let entryStart = true;
  for (; i < tokens.length; i++) {
    const token = tokens[i];
    if (depth === 0 && entryStart) {
      let key = token;
      // `async name(...)`, `*name(...)`, `get name()`: the key is the next name.
      while (
        key &&
        ((key.kind === 'ident' && ['async', 'get', 'set'].includes(key.value) && isKeyToken(tokens[i + 1])) ||
          key.value === '*')
      ) {
        key = tokens[++i];
      }
      if (key && isKeyToken(key) && [':', '(', ',', '}'].includes(tokens[i + 1]?.value ?? '')) {
        result.keys.push({ name: key.value, ...position(key.at) });
      }
      entryStart = false;
      if (key?.value === '}') break;
      continue;
    }
    if (token.kind !== 'punct') continue;
    if ('([{'.includes(token.value)) depth++;
    else if (')]}'.includes(token.value)) {
      if (depth === 0) break;
      depth--;
    } else if (token.value === ',' && depth === 0) entryStart = true;
  }
  return result;
}

function isKeyToken(token: Token | undefined): token is Token {
  return token !== undefined && (token.kind === 'ident' || token.kind === 'string');
}

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (ch === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== ch && text[j] !== '\n') {
        if (text[j] === '\\') j++;
        value += text[j] ?? '';
        j++;
      }
      tokens.push({ kind: 'string', value, at: i });
      i = j + 1;
    } else if (ch === '`') {
      i = skipTemplate(text, i + 1);
      tokens.push({ kind: 'string', value: '', at: i });
    } else if (/[A-Za-z_$]/.test(ch)) {
      const match = /^[A-Za-z0-9_$]+/.exec(text.slice(i, i + 256))!;
      tokens.push({ kind: 'ident', value: match[0], at: i });
      i += match[0].length;
    } else if (/\s/.test(ch)) i++;
    else {
      if ('()[]{},:*'.includes(ch)) tokens.push({ kind: 'punct', value: ch, at: i });
      i++;
    }
  }
  return tokens;
}

/** The index after a template literal that starts at `i` (just past its backtick), `${...}` included. */
function skipTemplate(text: string, i: number): number {
  while (i < text.length) {
    if (text[i] === '\\') i += 2;
    else if (text[i] === '`') return i + 1;
    else if (text[i] === '$' && text[i + 1] === '{') {
      let depth = 1;
      i += 2;
      while (i < text.length && depth > 0) {
        if (text[i] === '`') i = skipTemplate(text, i + 1);
        else {
          if (text[i] === '{') depth++;
          else if (text[i] === '}') depth--;
          i++;
        }
      }
    } else i++;
  }
  return i;
}
