import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../runtime/model/packageRoot.js';

const load = (name: string): object => JSON.parse(readFileSync(join(packageRoot, 'generator', 'schema', name), 'utf8'));

/** The JSON Schemas of the entity and config files; they ship with the package. */
export const entitySchema = load('entity.schema.json');
export const configSchema = load('config.schema.json');
