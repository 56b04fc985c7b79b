import AjvModule from 'ajv';
import { describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { mcpTools } from './mcpTools.js';

const Ajv = AjvModule.default;

describe('the MCP tools of the example app', () => {
  const tools = mcpTools(registry);

  it('have unique names in MCP’s alphabet, for the app’s own entities only', () => {
    const names = tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
    expect(names).toContain('products_lowStock');
    expect(names).toContain('orders_approve');
    expect(names.some((name) => name.startsWith('users_') || name.startsWith('webhooks_'))).toBe(false);
  });

  it('have input and output schemas that compile, objects at the root as MCP asks', () => {
    const ajv = new Ajv({ strict: true, allErrors: true, strictTypes: false, strictTuples: false });
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema.type, tool.name).toBe('object');
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
      expect(() => ajv.compile(tool.outputSchema), tool.name).not.toThrow();
    }
  });

  it('mark what reads and what destroys', () => {
    for (const tool of tools) {
      expect(tool.annotations.readOnlyHint, tool.name).toBe(tool.reads);
      expect(tool.annotations.destructiveHint, tool.name).toBe(tool.kind === 'delete');
    }
    const approve = tools.find((tool) => tool.name === 'orders_approve')!;
    expect(approve.action).toBe('approve');
    expect(approve.inputSchema.required).toEqual(['id', 'body']);
  });
});
