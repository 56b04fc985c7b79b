import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../support/cli.js';
import { adminSignIn, type Cluster, call, signIn, startCluster, within } from '../support/cluster.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { ADMIN_ENV, type SpawnedServer } from '../support/spawnServer.js';

/** The staleness bound the instances run with (the default) and what a test allows for its own polling. */
const BOUND_MS = 1000;
const POLL_SLACK_MS = 100;
const PASSWORD = 'correct horse battery staple!';
const run = promisify(execFile);

/** One statement through psql, as an operator types it: a connection that is not a server's. */
async function psql(schema: string, sql: string): Promise<string> {
  const { stdout } = await run('psql', [
    '-h',
    '127.0.0.1',
    '-U',
    'postgres',
    '-d',
    'test',
    '-v',
    'ON_ERROR_STOP=1',
    '-At',
    '-c',
    `SET search_path TO ${schema}; ${sql}`,
  ]);
  return stdout.trim();
}

const schemaOf = (env: Record<string, string>) => new URL(env.DATABASE_URL).searchParams.get('schema')!;

let redis: PrivateRedis;
let cluster: Cluster;
let schema: string;
let admin: string;
const figures: Record<string, number> = {};

beforeAll(async () => {
  redis = await startPrivateRedis();
  cluster = await startCluster(3, redis.url);
  schema = schemaOf(cluster.env);
  admin = await adminSignIn(cluster.instances[0]);
  for (const instance of cluster.instances)
    await within(
      async () => (await call(instance, 'GET', '/api/health', admin)).body.cluster?.up,
      (up) => up === true,
      10_000,
    );
}, 120_000);
afterAll(async () => {
  cluster?.stop();
  await redis?.stop();
  console.log(`writes made outside the servers (ms until all three agreed): ${JSON.stringify(figures)}`);
});

/** The longest any instance took until `read` gave `expected`. */
async function everyInstance<T>(name: string, read: (instance: SpawnedServer) => Promise<T>, expected: T) {
  const times = await Promise.all(
    cluster.instances.map((instance) =>
      within(
        () => read(instance),
        (v) => v === expected,
      ),
    ),
  );
  figures[name] = Math.max(...times);
  return figures[name];
}

/** The pinned notes' total, as a list remembered by every instance answers it. */
const pinnedTotal = async (instance: SpawnedServer) =>
  (await call(instance, 'GET', '/api/v1/notes?pinned=true', admin)).body.data?.totalCount as number;

describe('three instances on PostgreSQL + Redis, and writes made outside them', () => {
  it('hear an INSERT, an UPDATE and a TRUNCATE made in psql within the bound', async () => {
    const made = await call(cluster.instances[0], 'POST', '/api/v1/notes', admin, { title: 'seed' });
    expect(made.status).toBe(201);
    const seed = made.body.data.id as string;
    // Asked twice everywhere: the answer is remembered.
    for (const instance of cluster.instances) for (let i = 0; i < 2; i++) expect(await pinnedTotal(instance)).toBe(0);

    await psql(
      schema,
      `CREATE TEMP TABLE copy AS SELECT * FROM notes WHERE id = '${seed}';
       UPDATE copy SET id = '${'a'.repeat(24)}', pinned = true;
       INSERT INTO notes SELECT * FROM copy;`,
    );
    expect(await everyInstance('psqlInsert', pinnedTotal, 1)).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);
    // The record itself was always read from the database.
    expect((await call(cluster.instances[2], 'GET', `/api/v1/notes/${'a'.repeat(24)}`, admin)).status).toBe(200);

    await psql(schema, `UPDATE notes SET pinned = true WHERE id = '${seed}'`);
    expect(await everyInstance('psqlUpdate', pinnedTotal, 2)).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);

    await psql(schema, 'TRUNCATE notes');
    expect(await everyInstance('psqlTruncate', pinnedTotal, 0)).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);
  });

  it('end the sessions of an account disabled in psql everywhere within the bound', async () => {
    const email = 'compromised@example.test';
    const created = await call(cluster.instances[0], 'POST', '/api/v1/users', admin, {
      email,
      password: PASSWORD,
      displayName: 'Compromised',
      roles: ['USER'],
    });
    expect(created.status).toBe(201);
    const token = await signIn(cluster.instances[1], email, PASSWORD);
    for (const instance of cluster.instances)
      for (let i = 0; i < 2; i++) expect((await call(instance, 'GET', '/api/v1/auth/me', token)).status).toBe(200);

    await psql(schema, `UPDATE users SET disabled = true WHERE email = '${email}'`);
    const took = await everyInstance(
      'psqlDisable',
      async (instance) => (await call(instance, 'GET', '/api/v1/auth/me', token)).status,
      401,
    );
    expect(took).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);
    for (const instance of cluster.instances)
      expect((await call(instance, 'GET', '/api/v1/notes', token)).status).toBe(401);
  });

  it('take a permission removed from a role in psql everywhere within the bound', async () => {
    expect(
      (
        await call(cluster.instances[0], 'POST', '/api/v1/roles', admin, {
          key: 'READER',
          label: 'Reader',
          permissions: ['scheduledJobs:view'],
        })
      ).status,
    ).toBe(201);
    const email = 'reader@example.test';
    expect(
      (
        await call(cluster.instances[0], 'POST', '/api/v1/users', admin, {
          email,
          password: PASSWORD,
          displayName: 'Reader',
          roles: ['READER'],
        })
      ).status,
    ).toBe(201);
    const token = await signIn(cluster.instances[0], email, PASSWORD);
    for (const instance of cluster.instances)
      expect((await call(instance, 'GET', '/api/v1/scheduledJobs', token)).status).toBe(200);

    await psql(schema, `UPDATE roles SET permissions = '[]'::jsonb WHERE key = 'READER'`);
    const took = await everyInstance(
      'psqlRole',
      async (instance) => (await call(instance, 'GET', '/api/v1/scheduledJobs', token)).status,
      403,
    );
    expect(took).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);
  });

  it('show what `entigen import` wrote on every instance at once', async () => {
    for (const instance of cluster.instances) for (let i = 0; i < 2; i++) expect(await pinnedTotal(instance)).toBe(0);
    const file = join(mkdtempSync(join(tmpdir(), 'entigen-import-')), 'notes.jsonl');
    writeFileSync(file, '{"title":"imported one","pinned":true}\n{"title":"imported two","pinned":true}\n');
    const imported = await runCli(['import', 'notes', file, '--owner', ADMIN_ENV.ENTIGEN_ADMIN_EMAIL], repoRoot, {
      DATABASE_URL: cluster.env.DATABASE_URL,
    });
    expect(imported.stderr).toBe('');
    expect(imported.stdout).toMatch(/imported 2 records/);
    const took = await everyInstance('cliImport', pinnedTotal, 2);
    expect(took).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);
  });
});

describe('one instance on PostgreSQL without Redis', () => {
  it('hears a write made in psql through the same listening connection as its notices', async () => {
    const single = await startCluster(1, '', { REDIS_URL: '' });
    try {
      const [server] = single.instances;
      const token = await adminSignIn(server);
      const total = async () => (await call(server, 'GET', '/api/v1/notes?pinned=true', token)).body.data?.totalCount;
      const made = await call(server, 'POST', '/api/v1/notes', token, { title: 'seed' });
      expect(made.status).toBe(201);
      await within(
        async () => (await call(server, 'GET', '/api/health', token)).body.cluster,
        (state) => state?.up === true && state.transport === 'postgres',
      );
      for (let i = 0; i < 2; i++) expect(await total()).toBe(0);
      await psql(schemaOf(single.env), `UPDATE notes SET pinned = true WHERE id = '${made.body.data.id}'`);
      const took = await within(total, (n) => n === 1);
      figures.psqlWithoutRedis = took;
      expect(took).toBeLessThanOrEqual(BOUND_MS + POLL_SLACK_MS);
    } finally {
      single.stop();
    }
  }, 60_000);
});
