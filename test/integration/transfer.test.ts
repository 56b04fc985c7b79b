import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../../generated/index.js';
import { openStore } from '../../runtime/store/openStore.js';
import { repoRoot, runCli } from '../support/cli.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

const notice = (stderr: string) =>
  stderr.replace(
    /\(node:\d+\) Warning: NodeVersionSupportWarning[\s\S]*?https:\/\/a\.co\/\S+\n(\(Use `node[^\n]*\n)?/g,
    '',
  );

/** Records of a collection in a database, as stored. */
async function stored(url: string, collection: string) {
  const store = await openStore(url, repoRoot);
  try {
    await store.init(registry.model);
    return await store.find(collection, { sort: [{ field: 'id', direction: 'asc' }], limit: 1000 });
  } finally {
    await store.close();
  }
}

describe('export and import', () => {
  let server: TestServer;
  let dir: string;
  let source: string;
  let owner: { id: string; token: string };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'entigen-transfer-'));
    source = `sqlite:${join(dir, 'source.db')}`;
    server = await startTestServer({ DATABASE_URL: source }, { overrides: { rateLimit: GENEROUS_LIMITS } });
    owner = await server.user({ email: 'owner@example.test' });
    for (let i = 0; i < 30; i++)
      await server.call('POST', '/api/v1/articles', {
        token: owner.token,
        body: {
          title: `Article "${i}", with a comma`,
          body: `Line one\nline two of ${i}`,
          kind: i % 3 === 0 ? 'opinion' : 'news',
          views: i,
          rating: i / 4,
          tags: ['a', `t${i}`],
          meta: { n: i, nested: { ok: true } },
          featured: i % 2 === 0,
          sku: `SKU-${i}`,
        },
      });
  });
  afterAll(() => server.close());

  it('exports JSON lines and CSV, filtered like a list, and imports them back unchanged', async () => {
    const env = { DATABASE_URL: source };
    const jsonl = join(dir, 'articles.jsonl');
    const csv = join(dir, 'articles.csv');
    expect((await runCli(['export', 'articles', '--to', jsonl], repoRoot, env)).stderr).toMatch(
      /articles: 30 records written/,
    );
    expect((await runCli(['export', 'articles', '--to', csv], repoRoot, env)).status).toBe(0);
    const lines = readFileSync(jsonl, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(30);
    const first = JSON.parse(lines[0]);
    expect(first).toMatchObject({ title: 'Article "0", with a comma', ownerId: owner.id, meta: { n: 0 } });
    expect(readFileSync(csv, 'utf8').split('\n')[0]).toMatch(/^id,/);

    const news = await runCli(['export', 'articles', '--where', 'kind=news&featured=true'], repoRoot, env);
    const picked = news.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(picked.length).toBe(10);
    expect(picked.every((a) => a.kind === 'news' && a.featured)).toBe(true);
    const bad = await runCli(['export', 'articles', '--where', 'colour=red&limit=5'], repoRoot, env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/Invalid --where: colour is not a known query parameter; limit does not apply/);

    const before = await stored(source, 'articles');
    for (const [file, name] of [
      [jsonl, 'jsonl'],
      [csv, 'csv'],
    ]) {
      const target = `sqlite:${join(dir, `from-${name}.db`)}`;
      const imported = await runCli(['import', 'articles', file], repoRoot, { DATABASE_URL: target });
      expect(notice(imported.stderr)).toBe('');
      expect(imported.stdout).toMatch(/articles: imported 30 records from \d+ lines/);
      const after = await stored(target, 'articles');
      expect(after).toEqual(before);
      // Each imported record has its first version, as a created one would.
      expect(await stored(target, 'entityVersions')).toHaveLength(30);
    }
  });

  it('reports every bad line by number and writes nothing; --continue-on-error writes the rest', async () => {
    const file = join(dir, 'mixed.jsonl');
    const good = (n: number) => JSON.stringify({ title: `Good ${n}`, body: 'b', ownerId: owner.id, sku: `M-${n}` });
    writeFileSync(
      file,
      [
        good(1),
        good(2),
        JSON.stringify({ body: 'no title', ownerId: owner.id }),
        good(4),
        '{ not json',
        good(6),
        JSON.stringify({ title: 'x', body: 'b', kind: 'gossip', ownerId: owner.id }),
        good(8),
      ].join('\n'),
    );
    const target = `sqlite:${join(dir, 'mixed.db')}`;
    const strict = await runCli(['import', 'articles', file], repoRoot, { DATABASE_URL: target });
    expect(strict.status).toBe(1);
    expect(notice(strict.stderr)).toBe(
      `${file}:3: title: is required\n${file}:5: is not JSON: ${strictJsonMessage()}\n${file}:7: kind: must be one of news, opinion, guide\n`,
    );
    expect(strict.stdout).toMatch(/imported 0 records .* 3 lines refused; nothing was written/);
    expect(await stored(target, 'articles')).toHaveLength(0);

    const dry = await runCli(['import', 'articles', file, '--dry-run', '--continue-on-error'], repoRoot, {
      DATABASE_URL: target,
    });
    expect(dry.stdout).toMatch(/would import 5 records/);
    expect(await stored(target, 'articles')).toHaveLength(0);

    const lenient = await runCli(['import', 'articles', file, '--continue-on-error'], repoRoot, {
      DATABASE_URL: target,
    });
    expect(lenient.status).toBe(1);
    expect(lenient.stdout).toMatch(/imported 5 records from 8 lines in [\d.]+ s; 3 lines refused/);
    expect((await stored(target, 'articles')).map((a) => a.title).sort()).toEqual(
      ['Good 1', 'Good 2', 'Good 4', 'Good 6', 'Good 8'].sort(),
    );
    // The same file again: every line now repeats a unique sku (or was bad), and nothing half-goes in.
    const again = await runCli(['import', 'articles', file, '--from-line', '4'], repoRoot, { DATABASE_URL: target });
    expect(again.status).toBe(1);
    expect(notice(again.stderr)).toMatch(/:5: is not JSON/);
    expect(notice(again.stderr)).not.toMatch(/:3:/);
    // Resuming at line 4 into another database: lines 1 to 3 are not read.
    const resumedAt = `sqlite:${join(dir, 'resumed.db')}`;
    const resumed = await runCli(['import', 'articles', file, '--from-line', '4', '--continue-on-error'], repoRoot, {
      DATABASE_URL: resumedAt,
    });
    expect(resumed.stdout).toMatch(/imported 3 records from 8 lines/);
    expect((await stored(resumedAt, 'articles')).map((a) => a.title).sort()).toEqual(['Good 4', 'Good 6', 'Good 8']);
    const missing = await runCli(['import', 'articles', join(dir, 'none.jsonl')], repoRoot, {
      DATABASE_URL: resumedAt,
    });
    expect(missing.status).toBe(1);
    expect(notice(missing.stderr)).toBe(`entigen: ${join(dir, 'none.jsonl')}: no such file\n`);
  });

  it('refuses a taken unique value in all-or-nothing mode, naming its line; new ids are mapped', async () => {
    const target = `sqlite:${join(dir, 'unique.db')}`;
    const file = join(dir, 'unique.jsonl');
    writeFileSync(
      file,
      [1, 2, 3, 2]
        .map((n) =>
          JSON.stringify({ id: `${'a'.repeat(23)}${n}`, title: `U${n}`, body: 'b', sku: `U-${n}`, ownerId: owner.id }),
        )
        .join('\n'),
    );
    const refused = await runCli(['import', 'articles', file], repoRoot, { DATABASE_URL: target });
    expect(refused.status).toBe(1);
    expect(notice(refused.stderr)).toMatch(new RegExp(`${file}:4: (id|sku): must be unique`));
    expect(await stored(target, 'articles')).toHaveLength(0);

    const map = join(dir, 'ids.csv');
    writeFileSync(
      file,
      [1, 2].map((n) => JSON.stringify({ id: `${'b'.repeat(23)}${n}`, title: `N${n}`, body: 'b' })).join('\n'),
    );
    // Into the source database, whose users include the owner named by --owner.
    const mapped = await runCli(
      ['import', 'articles', file, '--ids', 'new', '--id-map', map, '--owner', 'OWNER@example.test'],
      repoRoot,
      { DATABASE_URL: source },
    );
    expect(notice(mapped.stderr)).toBe('');
    const rows = readFileSync(map, 'utf8').trim().split('\n');
    expect(rows[0]).toBe('line,from,to');
    expect(rows[1].split(',').slice(0, 2)).toEqual(['1', `${'b'.repeat(23)}1`]);
    const articles = await stored(source, 'articles');
    for (const row of rows.slice(1)) {
      const created = articles.find((a) => a.id === row.split(',')[2]);
      expect(created).toMatchObject({ ownerId: owner.id });
    }
    expect(articles.map((a) => a.id)).not.toContain(`${'b'.repeat(23)}1`);
  });

  it('names the line whose id a record already has, on SQLite and PostgreSQL, and writes nothing', async () => {
    const pg = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    for (const target of [
      `sqlite:${join(dir, 'taken-ids.db')}`,
      `${pg}?schema=import_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`,
    ]) {
      const line = (id: string, n: number) =>
        JSON.stringify({ id, title: `T${n}`, body: 'b', sku: `T-${n}-${target.length}`, ownerId: owner.id });
      const first = join(dir, 'first.jsonl');
      writeFileSync(first, [line(`${'c'.repeat(23)}1`, 1), line(`${'c'.repeat(23)}2`, 2)].join('\n'));
      expect((await runCli(['import', 'articles', first], repoRoot, { DATABASE_URL: target })).status).toBe(0);
      // Line 3 gives an id the first import stored; the lines before it are new.
      const second = join(dir, 'second.jsonl');
      writeFileSync(
        second,
        [line(`${'d'.repeat(23)}1`, 3), line(`${'d'.repeat(23)}2`, 4), line(`${'c'.repeat(23)}2`, 5)].join('\n'),
      );
      const refused = await runCli(['import', 'articles', second], repoRoot, { DATABASE_URL: target });
      expect(refused.status, target).toBe(1);
      expect(notice(refused.stderr)).toContain(`${second}:3: id: must be unique; a record with this id exists`);
      expect((await stored(target, 'articles')).map((a) => a.id).sort()).toEqual([
        `${'c'.repeat(23)}1`,
        `${'c'.repeat(23)}2`,
      ]);
    }
  });

  it('logs events (for afterCommit hooks, webhooks and realtime) only with --hooks', async () => {
    const target = `sqlite:${join(dir, 'hooks.db')}`;
    const file = join(dir, 'hooks.jsonl');
    writeFileSync(file, JSON.stringify({ title: 'H', body: 'b', ownerId: owner.id }));
    await runCli(['import', 'articles', file], repoRoot, { DATABASE_URL: target });
    expect(await stored(target, 'changeEvents')).toHaveLength(0);
    writeFileSync(file, JSON.stringify({ title: 'H2', body: 'b', ownerId: owner.id }));
    await runCli(['import', 'articles', file, '--hooks'], repoRoot, { DATABASE_URL: target });
    expect((await stored(target, 'changeEvents')).map((e) => e.event)).toEqual(['created']);
  });
});

function strictJsonMessage(): string {
  try {
    JSON.parse('{ not json');
  } catch (error) {
    return (error as Error).message;
  }
  return '';
}

describe('CSV exports are safe to open in a spreadsheet', () => {
  let server: TestServer;
  let dir: string;
  let source: string;
  const titles = ['=HYPERLINK("http://evil.test","open me")', '+1+2', '-2+3', '@SUM(A1:A9)', "'quoted", 'plain'];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'entigen-formulas-'));
    source = `sqlite:${join(dir, 'source.db')}`;
    server = await startTestServer({ DATABASE_URL: source }, { overrides: { rateLimit: GENEROUS_LIMITS } });
    const owner = await server.user({ email: 'owner@example.test' });
    for (const title of titles)
      expect(
        (
          await server.call('POST', '/api/v1/articles', {
            token: owner.token,
            body: { title, body: '\tstarts with a tab', views: -5 },
          })
        ).status,
      ).toBe(201);
  });
  afterAll(() => server.close());

  it('neutralizes formula cells by default, keeps them on request, and imports either back unchanged', async () => {
    const env = { DATABASE_URL: source };
    const safe = join(dir, 'safe.csv');
    const raw = join(dir, 'raw.csv');
    expect((await runCli(['export', 'articles', '--to', safe], repoRoot, env)).status).toBe(0);
    expect((await runCli(['export', 'articles', '--to', raw, '--keep-formulas'], repoRoot, env)).status).toBe(0);
    const text = readFileSync(safe, 'utf8');
    expect(text).toContain(`"'=HYPERLINK(""http://evil.test"",""open me"")"`);
    for (const cell of ["'+1+2", "'-2+3", "'@SUM(A1:A9)", "''quoted", "'\tstarts with a tab"])
      expect(text).toContain(cell);
    // Numbers are not text a spreadsheet runs: -5 stays a number.
    expect(text).toMatch(/,-5,/);
    expect(text).not.toMatch(/(^|,)[=+@]/m);
    const kept = readFileSync(raw, 'utf8');
    expect(kept).toContain(',+1+2,');
    expect(kept).toContain(`"=HYPERLINK(""http://evil.test"",""open me"")"`);

    const before = await stored(source, 'articles');
    for (const file of [safe, raw]) {
      const target = `sqlite:${join(dir, `from-${file === safe ? 'safe' : 'raw'}.db`)}`;
      const imported = await runCli(['import', 'articles', file], repoRoot, { DATABASE_URL: target });
      expect(imported.stdout).toMatch(/imported 6 records/);
      expect(await stored(target, 'articles')).toEqual(before);
    }
  });
});
