import { join } from 'node:path';
import { ENVIRONMENT_GROUPS } from '../../runtime/config/environment.js';
import { packageRoot } from '../../runtime/model/packageRoot.js';
import { ENVIRONMENT_VARIABLES } from '../../runtime/server/environment.js';

/** A heading's anchor as the documentation site makes it. */
const anchor = (heading: string) => heading.toLowerCase().replace(/\s+/g, '-');

/**
 * Where the documentation describes the setting a failure names: an environment variable
 * (`PORT must be ...`) or a config key in parentheses (`... (server.publicUrl) must be ...`).
 */
export function referenceHint(message: string): string | undefined {
  const variable = ENVIRONMENT_VARIABLES.find(
    (v) => !v.name.includes('<') && new RegExp(`(^|[^A-Z0-9_])${v.name}([^A-Z0-9_]|$)`).test(message),
  );
  const docs = join(packageRoot, 'docs', 'reference');
  if (variable) return `${join(docs, 'environment.md')}#${anchor(ENVIRONMENT_GROUPS[variable.group])}`;
  const key = /\(([a-z][A-Za-z]*(?:\.[A-Za-z]+)+)\)|\b(auth\.oidc|auth\.ldap|jobs\.schedules)\b/.exec(message);
  if (key) return `${join(docs, 'config.md')}#keys`;
  return undefined;
}
