import { type Document, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument, visit } from 'yaml';
import type { Diagnostic } from '../diagnostics.js';
import type { ParsedYamlCache } from './parsedYamlCache.js';

export type PathSegment = string | number;

/** A parsed YAML file that can still say where each value came from. */
export interface SourceFile {
  file: string;
  data: unknown;
  locate(path: PathSegment[], at?: 'key' | 'value'): { line: number; col: number };
  diagnostic(path: PathSegment[], message: string, at?: 'key' | 'value'): Diagnostic;
}

const MISSING = Symbol('missing');

/**
 * Parses `text` (the contents of `file`). With a cache, a text that parsed before without a
 * problem is not parsed again unless a check asks where one of its values is.
 */
export function loadYaml(
  file: string,
  text: string,
  cache?: ParsedYamlCache,
): { source?: SourceFile; diagnostics: Diagnostic[] } {
  // A text with {{ is always parsed: unquotedMacros reads its syntax tree.
  const cacheable = cache && !text.includes('{{') ? cache : undefined;
  const cached = cacheable ? cacheable.get(text, MISSING) : MISSING;
  if (cached !== MISSING) {
    let parsed: SourceFile | undefined;
    const located = () => (parsed ??= parseYaml(file, text).source!);
    return {
      source: {
        file,
        data: cached,
        locate: (path, at) => located().locate(path, at),
        diagnostic: (path, message, at) => located().diagnostic(path, message, at),
      },
      diagnostics: [],
    };
  }
  const loaded = parseYaml(file, text);
  if (loaded.source) cacheable?.set(text, loaded.source.data);
  return loaded;
}

function parseYaml(file: string, text: string): { source?: SourceFile; diagnostics: Diagnostic[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const position = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, col };
  };
  if (doc.errors.length > 0) {
    const diagnostics = doc.errors.map((error) => ({
      file,
      ...position(error.pos[0]),
      path: '',
      message: `invalid YAML: ${error.message.split('\n')[0]}`,
    }));
    return { diagnostics };
  }
  const unquoted = unquotedMacros(doc, text);
  if (unquoted.length > 0) {
    return {
      diagnostics: unquoted.map(({ offset, written }) => ({
        file,
        ...position(offset),
        path: '',
        message: `unquoted "${written}": in a [flow list] YAML reads {{ as a mapping; quote the value: "${written}"`,
      })),
    };
  }
  const locate = (path: PathSegment[], at: 'key' | 'value' = 'value') => position(offsetOf(doc, path, at));
  const source: SourceFile = {
    file,
    data: doc.toJS({ maxAliasCount: 100 }),
    locate,
    diagnostic: (path, message, at) => ({ file, ...locate(path, at), path: path.join('.'), message }),
  };
  return { source, diagnostics: [] };
}

/**
 * `[view:assignee:{{user.id}}]` parses without an error as a mapping inside a mapping: every flow
 * mapping that starts with `{{`, with the plain text it was meant to be (from the key before it).
 */
function unquotedMacros(doc: Document, text: string): { offset: number; written: string }[] {
  const found: { offset: number; written: string }[] = [];
  // Most files hold no macro at all: nothing to walk.
  if (!text.includes('{{')) return found;
  visit(doc, {
    Map(_, node, path) {
      if (!node.flow || !node.range || !text.startsWith('{{', node.range[0])) return;
      const pair = path.at(-1);
      const start = isPair(pair) ? (rangeStart(pair.key) ?? node.range[0]) : node.range[0];
      const close = text.indexOf('}}', node.range[0]);
      const end = close === -1 ? node.range[1] : close + 2;
      found.push({ offset: start, written: text.slice(start, end).replace(/:\s+\{\{/, ':{{') });
      return visit.SKIP;
    },
  });
  return found;
}

/** Offset of the node at `path`, or of its nearest existing ancestor. */
function offsetOf(doc: Document, path: PathSegment[], at: 'key' | 'value'): number {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (!pair) return offset;
      if (last && at === 'key') return rangeStart(pair.key) ?? offset;
      node = pair.value;
      offset = rangeStart(node) ?? rangeStart(pair.key) ?? offset;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      if (node === undefined) return offset;
      offset = rangeStart(node) ?? offset;
    } else {
      return offset;
    }
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}
