import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFromInputs } from './build.js';
import { readInputs } from './readInputs.js';

describe('hook modules of a project', () => {
  it('are read from hooks.dir and imported from the output folder by a relative path', async () => {
    const root = mkdtempSync(join(tmpdir(), 'entigen-hooks-dir-'));
    mkdirSync(join(root, 'entities'));
    mkdirSync(join(root, 'src', 'logic'), { recursive: true });
    writeFileSync(join(root, 'entigen.config.yaml'), 'version: 1\nhooks: { dir: src/logic }\n');
    writeFileSync(
      join(root, 'entities', 'tasks.yaml'),
      'version: 1\nname: Task\nplural: tasks\nbase: owned\nfields:\n  title: { type: string, required: true }\n',
    );
    writeFileSync(
      join(root, 'src', 'logic', 'tasks.ts'),
      "export default defineHooks('tasks', { beforeCreate: ({ data }) => data });\n",
    );
    // Not hook modules: declarations, other extensions, names that are no entity plural.
    writeFileSync(join(root, 'src', 'logic', 'tasks.d.ts'), '');
    writeFileSync(join(root, 'src', 'logic', 'notes.md'), '');
    const inputs = readInputs(root, 'entities');
    expect(inputs.hookFiles).toEqual([
      { file: 'src/logic/tasks.ts', plural: 'tasks', text: expect.stringContaining("defineHooks('tasks'") },
    ]);
    const { files } = await buildFromInputs(inputs, undefined, 'out/gen');
    expect(files.get('index.ts')).toContain("import tasksHooks from '../../src/logic/tasks.js';");
    expect(files.get('index.ts')).toContain('hooks: [tasksHooks]');
    expect(files.get('hooks.ts')).toContain('tasks: EntityHooks<Task, TaskCreate, TaskUpdate, Repositories>;');
  });

  it('default to hooks/, and a project without them gets a registry without hooks', async () => {
    const root = mkdtempSync(join(tmpdir(), 'entigen-no-hooks-'));
    mkdirSync(join(root, 'entities'));
    writeFileSync(
      join(root, 'entities', 'tasks.yaml'),
      'version: 1\nname: Task\nplural: tasks\nbase: owned\nfields:\n  title: { type: string, required: true }\n',
    );
    const inputs = readInputs(root, 'entities');
    expect(inputs.hookFiles).toBeUndefined();
    const { files } = await buildFromInputs(inputs);
    expect(files.get('index.ts')).toContain('}, { openapi });');
  });
});
