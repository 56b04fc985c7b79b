import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BuildFailure, sortDiagnostics } from '../../generator/diagnostics.js';
import { checkShape } from '../../generator/schema/checkShape.js';
import { loadYaml } from '../../generator/schema/loadYaml.js';
import { type RuntimeConfig, runtimeConfig } from '../../runtime/config/runtimeConfig.js';

const CONFIG_FILE = 'entigen.config.yaml';

/**
 * The project's entigen.config.yaml checked against the schema the build checks it with, before
 * a command acts on it: a key that does not exist or a value of the wrong kind stops the command
 * with its file:line:col, instead of being ignored or taking a default. `outcome` says what the
 * command then did not do.
 */
export function checkConfigFile(root: string, outcome: string): unknown {
  const path = join(root, CONFIG_FILE);
  if (!existsSync(path)) return {};
  const loaded = loadYaml(CONFIG_FILE, readFileSync(path, 'utf8'));
  const problems = [...loaded.diagnostics, ...(loaded.source ? checkShape(loaded.source, 'config') : [])];
  if (problems.length > 0) throw new BuildFailure(sortDiagnostics(problems), outcome);
  return loaded.source?.data ?? {};
}

/** The project's configuration, its file read once and checked first (see checkConfigFile). */
export function loadCheckedConfig(root: string, outcome: string, env: NodeJS.ProcessEnv): RuntimeConfig {
  return runtimeConfig(checkConfigFile(root, outcome), env);
}
