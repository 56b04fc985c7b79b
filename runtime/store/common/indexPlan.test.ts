import { describe, expect, it } from 'vitest';
import { modelFromInputs } from '../../../generator/build.js';
import { tableLayout } from './tableLayout.js';

const ENTITY = `version: 1
name: Ledger
plural: ledgers
ownership: system
fields:
  amount: { type: int }
filters: [amount]
`;

function planOf(text: string): string[] {
  const model = modelFromInputs({ entityFiles: [{ file: 'ledgers.yaml', text, origin: 'app' }] });
  const entity = model.entities.find((e) => e.plural === 'ledgers')!;
  return tableLayout(entity).indexes.map((index) => index.columns.join(','));
}

describe('index plan', () => {
  it("keeps the date parameters' index for entities with list routes", () => {
    expect(planOf(ENTITY)).toEqual(expect.arrayContaining(['createdAt,id', 'amount,id']));
  });

  it('leaves it out for an internal entity, which has no list route to take them, unless declared', () => {
    const internal = `${ENTITY}internal: true\n`;
    expect(planOf(internal)).toEqual(['amount,id']);
    expect(planOf(`${internal}indexes: [[createdAt]]\n`)).toEqual(['amount,id', 'createdAt,id']);
  });
});
