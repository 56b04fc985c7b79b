import { describe, expect, it } from 'vitest';
import type { AppModel } from '../../runtime/model/types.js';
import { conformanceModel } from '../../test/conformance/storeConformance.js';
import { indexPlanSummary } from './indexesCommand.js';

describe('the index plan summary', () => {
  it('names the first eight application entities and counts the rest, on one short line', () => {
    const [entity] = conformanceModel.entities;
    const entities = Array.from({ length: 200 }, (_, i) => ({ ...entity, plural: `things${i}`, origin: 'app' }));
    const model = { ...conformanceModel, entities: [...entities, { ...entity, plural: 'users', origin: 'builtin' }] };
    const line = indexPlanSummary(model as AppModel);
    expect(line).toMatch(/^entigen: index plan: \d+ indexes \(things0 \d+, things1 \d+, /);
    expect(line).toContain('things7 ');
    expect(line).not.toContain('things8 ');
    expect(line).toContain(', 192 more, built-ins the rest); `entigen indexes` lists them\n');
    expect(line.length).toBeLessThan(250);
  });
});
