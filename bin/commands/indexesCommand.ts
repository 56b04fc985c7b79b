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

/** At most this many entities are named in the build's summary line. */
const SUMMARY_NAMES = 8;

/** The build's one-line summary of the plan: the total, and the first entities' counts. */
export function indexPlanSummary(model: AppModel): string {
  let total = 0;
  const named: string[] = [];
  let others = 0;
  let builtIn = 0;
  for (const entity of model.entities) {
    const count = tableLayout(entity).indexes.length;
    total += count;
    if (entity.origin !== 'app') {
      builtIn++;
      continue;
    }
    if (named.length < SUMMARY_NAMES) named.push(`${entity.plural} ${count}`);
    else others++;
  }
  if (others > 0) named.push(`${others} more`);
  if (builtIn > 0) named.push('built-ins the rest');
  return `entigen: index plan: ${total} indexes (${named.join(', ')}); \`entigen indexes\` lists them\n`;
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
