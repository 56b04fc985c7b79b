import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as collections from './collections.js';
import { packageRoot } from './packageRoot.js';

const shipped = [
  join(packageRoot, 'entities/builtin'),
  ...readdirSync(join(packageRoot, 'entities/features')).map((f) => join(packageRoot, 'entities/features', f)),
];
const fileOf = (plural: string) => shipped.map((dir) => join(dir, `${plural}.yaml`)).find((path) => existsSync(path));

describe('built-in collection names', () => {
  const names = Object.entries(collections).filter(([, value]) => typeof value === 'string') as [string, string][];

  it.each(names)('%s names a shipped entity file whose plural it is', (_constant, plural) => {
    const file = fileOf(plural);
    expect(file, `no entities/**/${plural}.yaml`).toBeDefined();
    expect(parse(readFileSync(file!, 'utf8')).plural).toBe(plural);
  });

  it('the job timeout default is the one in scheduledJobs.yaml', () => {
    const jobs = parse(readFileSync(fileOf(collections.SCHEDULED_JOBS)!, 'utf8'));
    expect(jobs.fields.timeout.default).toBe(collections.DEFAULT_JOB_TIMEOUT_MS);
  });
});
