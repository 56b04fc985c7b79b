import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENVIRONMENT_VARIABLES } from '../../runtime/server/environment.js';
import { repoRoot } from '../support/cli.js';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

describe('the deployment files', () => {
  it('compose.yaml sets only variables entigen reads, and nginx names its instances', () => {
    const compose = parse(read('compose.yaml')) as {
      services: Record<string, { environment?: Record<string, string>; build?: string; image?: string }>;
    };
    const known = new Set(ENVIRONMENT_VARIABLES.map((variable) => variable.name));
    const apps = Object.entries(compose.services).filter(([, service]) => service.build === '.');
    expect(apps.map(([name]) => name).sort()).toEqual(['app1', 'app2', 'migrate']);
    for (const [name, service] of apps)
      for (const variable of Object.keys(service.environment ?? {}))
        expect(known.has(variable), `${name} sets ${variable}, which entigen does not read`).toBe(true);
    const nginx = read('deploy/nginx.conf');
    for (const [name] of apps.filter(([name]) => name.startsWith('app')))
      expect(nginx).toContain(`server ${name}:3000`);
    expect(nginx).toMatch(/proxy_next_upstream [^;]*http_503[^;]*non_idempotent/);
    expect(nginx).toContain('proxy_set_header X-Forwarded-For');
  });

  it('the Dockerfile builds with dev dependencies and runs without them, as a user, with a health check', () => {
    const dockerfile = read('Dockerfile');
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages).toHaveLength(2);
    const [build, run] = stages;
    expect(build).toContain('entigen.js check');
    expect(run).toContain('npm ci --omit=dev');
    expect(run).toMatch(/^USER node$/m);
    expect(run).toMatch(/HEALTHCHECK[\s\S]*\/api\/health/);
    expect(run).toMatch(/CMD \["node", "--max-semi-space-size=8", "dist\/bin\/entigen.js", "serve"\]/);
    expect(read('.dockerignore')).toMatch(/^node_modules$/m);
  });
});
