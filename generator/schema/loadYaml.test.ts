import { describe, expect, it } from 'vitest';
import { loadYaml } from './loadYaml.js';

const text = 'version: 1\nfields:\n  title: { type: strin, extra: 1 }\n  list:\n    - a\n    - b\n';

describe('loadYaml', () => {
  it('locates values and keys by path, 1-based', () => {
    const { source } = loadYaml('x.yaml', text);
    expect(source!.locate(['fields', 'title', 'type'])).toEqual({ line: 3, col: 18 });
    expect(source!.locate(['fields', 'title', 'extra'], 'key')).toEqual({ line: 3, col: 25 });
    expect(source!.locate(['fields', 'list', 1])).toEqual({ line: 6, col: 7 });
  });

  it('falls back to the nearest existing ancestor for a missing path', () => {
    const { source } = loadYaml('x.yaml', text);
    expect(source!.locate(['fields', 'title', 'missing', 'deeper'])).toEqual({ line: 3, col: 10 });
  });

  it('reports syntax errors and duplicate keys with positions instead of data', () => {
    expect(loadYaml('x.yaml', 'a: [1,\n').diagnostics[0]).toMatchObject({
      file: 'x.yaml',
      line: 2,
      message: expect.stringContaining('invalid YAML'),
    });
    expect(loadYaml('x.yaml', 'a: 1\na: 2\n').diagnostics[0]).toMatchObject({
      line: 2,
      message: expect.stringContaining('unique'),
    });
  });

  it('says to quote a {{...}} value that YAML would read as a mapping in a flow list', () => {
    const { source, diagnostics } = loadYaml(
      'x.yaml',
      'permissions:\n  AGENT: ["view:x", view:assignee:{{user.id}}]\n',
    );
    expect(source).toBeUndefined();
    expect(diagnostics).toEqual([
      {
        file: 'x.yaml',
        line: 2,
        col: 21,
        path: '',
        message:
          'unquoted "view:assignee:{{user.id}}": in a [flow list] YAML reads {{ as a mapping; quote the value: "view:assignee:{{user.id}}"',
      },
    ]);
    // Quoted, or in a block list, it is plain text.
    expect(loadYaml('x.yaml', 'AGENT: ["view:assignee:{{user.id}}"]\n').source!.data).toEqual({
      AGENT: ['view:assignee:{{user.id}}'],
    });
    expect(loadYaml('x.yaml', 'AGENT:\n  - view:assignee:{{user.id}}\n').source!.data).toEqual({
      AGENT: ['view:assignee:{{user.id}}'],
    });
  });
});
