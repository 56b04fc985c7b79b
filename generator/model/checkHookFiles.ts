import { HOOK_NAMES } from '../../runtime/model/hookNames.js';
import type { AppModel } from '../../runtime/model/types.js';
import type { Diagnostic } from '../diagnostics.js';
import type { HookFile } from '../readInputs.js';
import { scanHookModule } from './scanHookModule.js';

/** Keys a hooks object may have besides the hooks: the entity's custom endpoint handlers. */
const OTHER_KEYS = ['endpoints'];

/**
 * Each hook module must be named after a public entity, call defineHooks with that entity's
 * plural, and use known hook names only. Problems point at the file, line and column.
 */
export function checkHookFiles(model: AppModel, files: readonly HookFile[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const at = (file: string, line: number, col: number, message: string) =>
    diagnostics.push({ file, line, col, path: '', message });
  const publicEntities = model.entities.filter((e) => !e.internal).map((e) => e.plural);
  for (const { file, text, plural } of files) {
    if (!publicEntities.includes(plural)) {
      at(
        file,
        1,
        1,
        `hooks for unknown entity "${plural}": name the file after an entity's plural (${publicEntities.join(', ')})`,
      );
      continue;
    }
    const scanned = scanHookModule(text);
    if (!scanned.call) {
      at(file, 1, 1, `must export default defineHooks('${plural}', { ... }) (import it from the generated hooks.ts)`);
      continue;
    }
    if (!scanned.plural)
      at(file, scanned.call.line, scanned.call.col, `defineHooks must name the entity as a string: '${plural}'`);
    else if (scanned.plural.value !== plural) {
      const known = publicEntities.includes(scanned.plural.value);
      at(
        file,
        scanned.plural.line,
        scanned.plural.col,
        known
          ? `defineHooks('${scanned.plural.value}') in ${plural}.ts: a hook module is for the entity it is named after ('${plural}')`
          : `defineHooks names unknown entity "${scanned.plural.value}"`,
      );
    }
    for (const key of scanned.keys) {
      if (!(HOOK_NAMES as readonly string[]).includes(key.name) && !OTHER_KEYS.includes(key.name)) {
        at(file, key.line, key.col, `unknown hook "${key.name}"; hooks: ${[...HOOK_NAMES, ...OTHER_KEYS].join(', ')}`);
      }
    }
  }
  return diagnostics;
}
