import { checkedModel } from '../../generator/build.js';
import { readInputs } from '../../generator/readInputs.js';
import type { AppModel } from '../../runtime/model/types.js';
import { tableLayout } from '../../runtime/store/common/tableLayout.js';
import { reportFailure } from './reportFailure.js';

/** Per entity, the indexes every store keeps for its lists (what `entigen indexes` prints). */
export function indexPlanText(model: AppModel, only?: string): string {
  const lines: string[] = [];
  for (const entity of model.entities) {
    if (only && entity.plural !== only) continue;
    lines.push(`${entity.plural}:`);
    for (const index of tableLayout(entity).indexes) {
      const method = index.method === 'btree' ? '' : ` ${index.method}`;
      const only = index.only ? ` [${index.only.join(', ')}]` : '';
      const live = index.live ? ' where not archived' : '';
      lines.push(`  (${index.columns.join(', ')})${method}${live}${only}  ${index.why}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The build's one-line summary of the plan. */
export function indexPlanSummary(model: AppModel): string {
  const app = model.entities.filter((e) => e.origin === 'app');
  const count = (plural: string) => tableLayout(model.entities.find((e) => e.plural === plural)!).indexes.length;
  const total = model.entities.reduce((n, e) => n + tableLayout(e).indexes.length, 0);
  return `entigen: index plan: ${total} indexes (${app.map((e) => `${e.plural} ${count(e.plural)}`).join(', ')}${app.length < model.entities.length ? ', built-ins the rest' : ''}); \`entigen indexes\` lists them\n`;
}

/** `entigen indexes [entity]`: the planned indexes with the list query each serves. */
export async function indexesCommand(entity: string | undefined, options: { entities: string }): Promise<void> {
  try {
    const model = checkedModel(readInputs(process.cwd(), options.entities));
    if (entity && !model.entities.some((e) => e.plural === entity)) {
      process.stderr.write(`entigen: unknown entity "${entity}"\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(indexPlanText(model, entity));
  } catch (error) {
    reportFailure(error);
  }
}
