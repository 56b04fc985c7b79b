import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadYaml } from './loadYaml.js';
import { ParsedYamlCache } from './parsedYamlCache.js';

const TEXT = 'name: Book\nfields:\n  title: { type: string, required: true }\n  pages: { type: int, max: .inf }\n';

/** A build's use of the cache: open, load each text, save. */
function loadAll(dir: string, texts: string[]) {
  const cache = ParsedYamlCache.open(dir);
  const loaded = texts.map((text, i) => loadYaml(`entities/f${i}.yaml`, text, cache));
  cache.save();
  return loaded;
}

describe('the parsed YAML cache', () => {
  it('gives a later build the same data and positions without parsing again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-parsed-'));
    const [first] = loadAll(dir, [TEXT]);
    const cache = ParsedYamlCache.open(dir);
    expect(cache.get(TEXT, 'missing')).toEqual(first.source!.data);
    const [again] = loadAll(dir, [TEXT]);
    expect(again.source!.data).toEqual(first.source!.data);
    // What JSON could not keep.
    expect((again.source!.data as { fields: { pages: { max: number } } }).fields.pages.max).toBe(Infinity);
    expect(again.source!.locate(['fields', 'pages', 'max'])).toEqual({ line: 4, col: 28 });
    expect(again.source!.diagnostic(['fields', 'title'], 'bad', 'key')).toEqual({
      file: 'entities/f0.yaml',
      line: 3,
      col: 3,
      path: 'fields.title',
      message: 'bad',
    });
  });

  it('hands each read objects of its own, as they were when parsed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-parsed-'));
    const [first] = loadAll(dir, [TEXT]);
    (first.source!.data as { name: string }).name = 'changed after parsing';
    const cache = ParsedYamlCache.open(dir);
    const a = cache.get(TEXT, undefined) as { name: string };
    const b = cache.get(TEXT, undefined) as { name: string };
    expect(a.name).toBe('Book');
    expect(a).not.toBe(b);
  });

  it('keeps only the texts of the last build, and never a text that did not parse', () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-parsed-'));
    const broken = 'name: [unclosed\n';
    loadAll(dir, [TEXT, 'name: Old\n', broken]);
    const cache = ParsedYamlCache.open(dir);
    expect(cache.get('name: Old\n', 'missing')).toEqual({ name: 'Old' });
    expect(cache.get(broken, 'missing')).toBe('missing');
    const [, problem] = loadAll(dir, [TEXT, broken]);
    expect(problem.diagnostics[0].message).toMatch(/^invalid YAML/);
    expect(ParsedYamlCache.open(dir).get('name: Old\n', 'missing')).toBe('missing');
    expect(ParsedYamlCache.open(dir).get(TEXT, 'missing')).toEqual({
      name: 'Book',
      fields: { title: { type: 'string', required: true }, pages: { type: 'int', max: Infinity } },
    });
  });

  it('parses a text with {{ every time, so an unquoted macro is still reported', () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-parsed-'));
    const text = 'permissions:\n  USER: [view:owner:{{user.id}}]\n';
    for (let i = 0; i < 2; i++) {
      const [loaded] = loadAll(dir, [text]);
      expect(loaded.diagnostics[0].message).toMatch(/^unquoted "view:owner:\{\{user.id\}\}"/);
    }
    const quoted = 'permissions:\n  USER: ["view:owner:{{user.id}}"]\n';
    loadAll(dir, [quoted]);
    expect(ParsedYamlCache.open(dir).get(quoted, 'missing')).toBe('missing');
  });

  it('reads a damaged or foreign file as empty, and works without a folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-parsed-'));
    loadAll(dir, [TEXT]);
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file), 'not what the cache writes');
    expect(ParsedYamlCache.open(dir).get(TEXT, 'missing')).toBe('missing');
    loadAll(dir, [TEXT]);
    expect(ParsedYamlCache.open(dir).get(TEXT, 'missing')).not.toBe('missing');
    const none = ParsedYamlCache.open(undefined);
    none.set(TEXT, { name: 'Book' });
    none.save();
    expect(loadYaml('f.yaml', TEXT, none).source!.data).toEqual({ name: 'Book' });
    expect(loadAll(join(dir, 'does', 'not', 'exist'), [TEXT])[0].source!.locate(['name'])).toEqual({
      line: 1,
      col: 7,
    });
  });
});
