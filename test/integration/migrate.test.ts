import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppModel } from '../../runtime/model/types.js';
import { SqliteStore } from '../../runtime/store/sqlite/sqliteStore.js';
import type { Doc } from '../../runtime/store/types.js';
import { newId } from '../../runtime/write/prepareWrite.js';
import { runCli, servableApp } from '../support/cli.js';
import { type SpawnedServer, spawnServer } from '../support/spawnServer.js';

const article = (title: string): Doc => ({
  id: newId(),
  title,
  slug: title.toLowerCase().replace(/\W+/g, '-'),
  body: `${title} body`,
  status: 'draft',
  views: 0,
  ownerId: '0'.repeat(24),
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
});

async function withStore<T>(app: string, db: string, fn: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = SqliteStore.open(join(app, 'data', db));
  await store.init(JSON.parse(readFileSync(join(app, 'generated', 'metadata.json'), 'utf8')) as AppModel);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('entigen migrate', () => {
  let app: string;
  let server: SpawnedServer | undefined;
  const env = { DATABASE_URL: 'sqlite:data/app.db', SESSION_SECRET: 'migrate-test' };

  beforeAll(async () => {
    app = servableApp();
    expect((await runCli(['build'], app)).status).toBe(0);
    mkdirSync(join(app, 'data'), { recursive: true });
    await withStore(app, 'app.db', async (store) => {
      for (const title of ['One', 'Two', 'Three']) await store.insert('articles', article(title));
    });
  });
  afterAll(() => server?.child.kill('SIGKILL'));

  it('applies pending migrations in order with progress, records them, and the server refuses to start until then', async () => {
    const file = join(app, 'entities', 'articles.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('fields:\n', 'fields:\n  isbn: { type: string, required: true }\n'),
    );
    expect((await runCli(['build'], app, env)).status).toBe(1);
    const created = await runCli(['migrate', '--create', 'add-isbn'], app);
    expect(created.status).toBe(0);
    const [migrationFile] = readdirSync(join(app, 'migrations'));
    expect(readFileSync(join(app, 'migrations', migrationFile), 'utf8')).toContain(
      'fill: { entity: articles, field: isbn, value: ... }',
    );
    writeFileSync(
      join(app, 'migrations', migrationFile),
      `${readFileSync(join(app, 'migrations', migrationFile), 'utf8')}steps:\n  - fill: { entity: articles, field: isbn, value: unknown }\n  - script: migrations/shout.ts\n`,
    );
    writeFileSync(
      join(app, 'migrations', 'shout.ts'),
      [
        'export default async function ({ store, log, repositories }) {',
        "  for (const a of await store.find('articles', {})) await store.update('articles', a.id, { title: a.title.toUpperCase() });",
        "  log('titles upper-cased');",
        // Repository writes run the hooks: the order takes its quantity off the stock in this transaction.
        "  const owner = { ownerId: '0'.repeat(24) };",
        "  const lamp = await repositories.products.create({ name: 'Lamp', sku: 'L-1', price: 1, stock: 3 }, owner);",
        '  await repositories.orders.create({ product: lamp.id, quantity: 2 }, owner);',
        "  log('stock after the order: ' + (await repositories.products.get(lamp.id)).stock);",
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(join(app, 'migrations', '99999999999999_later.yaml'), 'version: 1\nname: later\n');
    expect((await runCli(['build'], app, env)).status).toBe(0);

    const refused = await runCli(['serve', '--port', '0', '--host', '127.0.0.1'], app, env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      `2 pending migration(s): ${migrationFile.replace('.yaml', '')}, 99999999999999_later; run \`entigen migrate\` first`,
    );

    const migrated = await runCli(['migrate'], app, env);
    expect(migrated.stderr).toBe('');
    expect(migrated.status).toBe(0);
    const lines = migrated.stdout.trim().split('\n');
    expect(lines[0]).toBe(`entigen: [1/2] ${migrationFile.replace('.yaml', '')} (2 step(s))`);
    expect(lines).toContain('entigen:   fill articles.isbn: 3 record(s)');
    expect(lines).toContain('entigen:   script migrations/shout.ts');
    expect(lines).toContain('entigen:     titles upper-cased');
    expect(lines).toContain('entigen:     stock after the order: 1');
    expect(lines).toContain('entigen: [2/2] 99999999999999_later (0 step(s))');
    expect(lines.at(-1)).toBe('entigen: applied 2 migration(s)');

    await withStore(app, 'app.db', async (store) => {
      const articles = await store.find('articles', { sort: [{ field: 'title', direction: 'asc' }] });
      expect(articles.map((a) => [a.title, a.isbn])).toEqual([
        ['ONE', 'unknown'],
        ['THREE', 'unknown'],
        ['TWO', 'unknown'],
      ]);
      const recorded = await store.find('schemaMigrations', { sort: [{ field: 'name', direction: 'asc' }] });
      expect(recorded.map((r) => [r.name, r.steps])).toEqual([
        [migrationFile.replace('.yaml', ''), 2],
        ['99999999999999_later', 0],
      ]);
    });
    expect((await runCli(['migrate'], app, env)).stdout).toBe('entigen: no pending migrations\n');

    server = await spawnServer(env, app);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  it('records every migration as applied on a store without application records, so a new deployment starts at once', async () => {
    const fresh = await spawnServer({ ...env, DATABASE_URL: 'sqlite:data/fresh.db' }, app);
    try {
      expect((await fetch(`${fresh.url}/api/health`)).status).toBe(200);
    } finally {
      fresh.child.kill('SIGKILL');
    }
    await withStore(app, 'fresh.db', async (store) => {
      expect((await store.find('schemaMigrations', {})).map((r) => r.steps)).toEqual([0, 0]);
    });
  });

  it('refuses a migration whose step does not fit the model, naming the file and step, and applies nothing', async () => {
    writeFileSync(
      join(app, 'migrations', '99999999999999_zz-bad.yaml'),
      'steps:\n  - fill: { entity: articles, field: views, value: lots }\n',
    );
    const bad = await runCli(['migrate'], app, env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      'migrations/99999999999999_zz-bad.yaml steps.0.fill.value: must be integer or null for articles.views',
    );
    writeFileSync(
      join(app, 'migrations', '99999999999999_zz-bad.yaml'),
      'steps:\n  - fill: { entity: nothing, field: x, value: 1 }\n',
    );
    expect((await runCli(['migrate'], app, env)).stderr).toContain(
      'migrations/99999999999999_zz-bad.yaml steps.0.fill.entity: unknown entity nothing',
    );
    writeFileSync(join(app, 'migrations', '99999999999999_zz-bad.yaml'), 'steps: [ { drop: everything } ]\n');
    expect((await runCli(['migrate'], app, env)).stderr).toContain(
      'steps.0: a step is one of { fill: { entity, field, value } } or { script: PATH }',
    );
    await withStore(app, 'app.db', async (store) => expect(await store.count('schemaMigrations', {})).toBe(2));
  });
});
