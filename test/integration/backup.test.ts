import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { registry } from '../../generated/index.js';
import { everyRecord } from '../../runtime/backup/takeBackup.js';
import type { FileStorage } from '../../runtime/files/fileStorage.js';
import { openFileStorage } from '../../runtime/files/mediaFiles.js';
import { openStore } from '../../runtime/store/openStore.js';
import type { Doc, Store } from '../../runtime/store/types.js';
import { repoRoot, runCli } from '../support/cli.js';
import { type S3Target, startS3 } from '../support/s3Server.js';
import { GENEROUS_LIMITS, startTestServer, type TestServer } from '../support/testServer.js';

/**
 * stderr without the AWS SDK's notice that its 2027 versions will need Node 22, and without the
 * progress lines a slow machine sees after five seconds ("files 1/3").
 */
const problems = (stderr: string) =>
  stderr
    .replace(
      /\(node:\d+\) Warning: NodeVersionSupportWarning[\s\S]*?https:\/\/a\.co\/\S+\n(\(Use `node --trace-warnings[^\n]*\n)?/g,
      '',
    )
    .replace(/^(database|files|upload) \d+\/\d+\n/gm, '');

const PG_BASE = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Every record of every collection, by collection, in id order. */
async function snapshot(url: string): Promise<Map<string, Doc[]>> {
  const store = await openStore(url, repoRoot);
  try {
    await store.init(registry.model);
    return await records(store);
  } finally {
    await store.close();
  }
}

/** Bookkeeping a running server moves on its own (lease times, the delivery cursor). */
const MOVING = new Set(['eventCursors']);

async function records(store: Store): Promise<Map<string, Doc[]>> {
  const all = new Map<string, Doc[]>();
  for (const entity of registry.model.entities) {
    if (MOVING.has(entity.plural)) continue;
    const docs: Doc[] = [];
    for await (const doc of everyRecord(store, entity.plural)) docs.push(doc);
    all.set(entity.plural, docs);
  }
  return all;
}

async function files(storage: FileStorage): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const key of storage.list()) out.set(key, await text((await storage.get(key))!.body));
  return out;
}

/** Records and files a real app would have: versions, audit entries, users, media. */
async function fill(server: TestServer): Promise<void> {
  const owner = await server.user();
  for (let i = 0; i < 12; i++) {
    const created = await server.call('POST', '/api/v1/articles', {
      token: owner.token,
      body: { title: `Backed up ${i}`, body: 'b', price: i },
    });
    expect(created.status).toBe(201);
    await server.call('PATCH', `/api/v1/articles/${created.body.data.id}`, {
      token: owner.token,
      body: { title: `Backed up ${i}, edited` },
    });
  }
  for (let i = 0; i < 3; i++) {
    const form = new FormData();
    form.append('file', new Blob([`file number ${i} `.repeat(100)], { type: 'text/plain' }), `f${i}.txt`);
    const uploaded = await fetch(`${server.url}/api/v1/mediaAssets/upload`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(uploaded.status).toBe(201);
  }
}

/** Everything in the copy is as it was in the source; nothing made before the backup is missing. */
function expectSameAsSource(source: Map<string, Doc[]>, copy: Map<string, Doc[]>, before: Map<string, Doc[]>) {
  for (const [collection, docs] of copy) {
    const byId = new Map(source.get(collection)!.map((doc) => [doc.id, doc]));
    // Records the server wrote while the backup ran may be there or not; each one there is exact.
    for (const doc of docs) {
      if (collection === 'sequences') continue;
      expect(byId.get(doc.id), `${collection} ${doc.id}`).toEqual(doc);
    }
    const ids = new Set(docs.map((doc) => doc.id));
    for (const doc of before.get(collection) ?? [])
      if (collection !== 'idempotencyRecords') expect(ids.has(doc.id), `${collection} ${doc.id} missing`).toBe(true);
  }
}

describe('backup and restore', () => {
  let s3: S3Target;
  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(() => s3.close());

  it('SQLite: copies the database online while writes go on, with the files, and restores it whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-backup-'));
    const uploads = join(dir, 'uploads');
    const databaseUrl = `sqlite:${join(dir, 'app.db')}`;
    const server = await startTestServer(
      { DATABASE_URL: databaseUrl, UPLOADS_DIR: uploads },
      { overrides: { rateLimit: GENEROUS_LIMITS } },
    );
    try {
      await fill(server);
      const before = await records(server.ctx.store);
      const owner = await server.user();
      let writing = true;
      const writes = (async () => {
        let n = 0;
        while (writing)
          await server.call('POST', '/api/v1/articles', {
            token: owner.token,
            body: { title: `during ${n++}`, body: 'b' },
          });
        return n;
      })();
      const backups = join(dir, 'backups');
      const result = await runCli(['backup', '--to', `${backups}/`], repoRoot, {
        DATABASE_URL: databaseUrl,
        UPLOADS_DIR: uploads,
      });
      writing = false;
      expect(problems(result.stderr)).toBe('');
      expect(result.status).toBe(0);
      expect(await writes).toBeGreaterThan(0);
      expect(result.stdout).toMatch(
        /backup entigen-backup-\d{8}T\d{9}Z\.tar\.gz written to .*: the sqlite database \(sqlite-file\), 3 media files/,
      );
      const [archive] = readdirSync(backups);

      const restoredDir = mkdtempSync(join(tmpdir(), 'entigen-restored-'));
      const restoredUrl = `sqlite:${join(restoredDir, 'app.db')}`;
      const restore = await runCli(['restore', join(backups, archive)], repoRoot, {
        DATABASE_URL: restoredUrl,
        UPLOADS_DIR: join(restoredDir, 'uploads'),
      });
      expect(problems(restore.stderr)).toBe('');
      expect(restore.status).toBe(0);
      expect(restore.stdout).toMatch(/restored entigen-backup-.*: \d+ records, 3 media files/);

      expectSameAsSource(await records(server.ctx.store), await snapshot(restoredUrl), before);
      const restoredVersions = (await snapshot(restoredUrl)).get('entityVersions')!;
      expect(restoredVersions.length).toBeGreaterThanOrEqual(24);
      const sourceFiles = await files(server.ctx.media!.storage);
      expect(
        await files(openFileStorage({ ...registryUploads(), dir: join(restoredDir, 'uploads') }, repoRoot)),
      ).toEqual(sourceFiles);

      // Never over a database that holds records.
      const again = await runCli(['restore', join(backups, archive)], repoRoot, {
        DATABASE_URL: restoredUrl,
        UPLOADS_DIR: join(restoredDir, 'uploads'),
      });
      expect(again.status).toBe(1);
      expect(again.stderr).toMatch(/exists: restore into a new database file/);
      const notBackup = join(dir, 'x.tar.gz');
      writeFileSync(notBackup, 'not a backup');
      const wrong = await runCli(['restore', notBackup], repoRoot, {
        DATABASE_URL: `sqlite:${join(dir, 'other.db')}`,
        UPLOADS_DIR: join(dir, 'other'),
      });
      expect(wrong.status).toBe(1);
      expect(wrong.stderr).toBe('entigen: this is not an entigen backup: not a whole .tar.gz archive\n');
      expect(wrong.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await server.close();
    }
  });

  // Seven CLI runs with pg_dump and pg_restore: some 17 s alone, several times that beside the other suites.
  it('PostgreSQL: pg_dump into a new database, a logical copy into another schema, and S3 with retention', {
    timeout: 180_000,
  }, async () => {
    // What each CLI run took, printed if the test fails, so a slow or stuck step names itself.
    const took: string[] = [];
    onTestFailed(() => console.error(`CLI runs so far:\n${took.join('\n')}`));
    const timedCli = async (...args: Parameters<typeof runCli>) => {
      const started = Date.now();
      const result = await runCli(...args);
      took.push(`${args[0].join(' ')}: exit ${result.status} after ${Date.now() - started} ms`);
      return result;
    };
    const schema = `b_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const databaseUrl = `${PG_BASE}?schema=${schema}`;
    const server = await startTestServer(
      { DATABASE_URL: databaseUrl, ...s3.env },
      { overrides: { rateLimit: GENEROUS_LIMITS } },
    );
    const admin = new pg.Client({ connectionString: PG_BASE });
    await admin.connect();
    const database = `restore_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    try {
      await fill(server);
      const source = await records(server.ctx.store);
      const sourceFiles = await files(server.ctx.media!.storage);
      const to = `s3://${s3.settings.bucket}/${s3.settings.prefix}backups/`;
      const env = { DATABASE_URL: databaseUrl, ...s3.env };
      for (let i = 0; i < 3; i++) {
        const taken = await timedCli(['backup', '--to', to, '--keep', '2'], repoRoot, env);
        expect(problems(taken.stderr)).toBe('');
        expect(taken.stdout, taken.stdout).toMatch(/the postgres database \(pg-dump\), 3 media files/);
      }
      const kept: string[] = [];
      for await (const key of s3Backups(s3)) kept.push(key);
      expect(kept).toHaveLength(2);

      // pg_dump: the same schema name, in a new database; the files into another prefix.
      await admin.query(`CREATE DATABASE ${database}`);
      const restoredUrl = `${PG_BASE.replace(/\/[^/]*$/, `/${database}`)}?schema=${schema}`;
      const restoredFiles = { ...s3.env, S3_PREFIX: `${s3.settings.prefix}restored/` };
      const restore = await timedCli(['restore', to], repoRoot, { DATABASE_URL: restoredUrl, ...restoredFiles });
      expect(problems(restore.stderr)).toBe('');
      expect(restore.status).toBe(0);
      expect(await snapshot(restoredUrl)).toEqual(source);
      const restoredStorage = openFileStorage(
        { ...registryUploads(), driver: 's3', s3: s3.withPrefix(`${s3.settings.prefix}restored/`) },
        repoRoot,
      );
      expect(await files(restoredStorage)).toEqual(sourceFiles);
      const wrongSchema = await timedCli(['restore', to], repoRoot, {
        DATABASE_URL: `${PG_BASE}?schema=elsewhere_${schema}`,
        ...restoredFiles,
      });
      expect(wrongSchema.status).toBe(1);
      expect(wrongSchema.stderr).toMatch(/pg_dump of the schema .*--logical/);

      // Logical: any schema (any store).
      const file = join(mkdtempSync(join(tmpdir(), 'entigen-logical-')), 'copy.tar.gz');
      const logical = await timedCli(['backup', '--logical', '--to', file], repoRoot, env);
      expect(logical.stdout).toMatch(/\(logical\)/);
      const otherSchema = `${PG_BASE}?schema=l_${schema}`;
      const intoOther = await timedCli(['restore', file], repoRoot, {
        DATABASE_URL: otherSchema,
        ...s3.env,
        S3_PREFIX: `${s3.settings.prefix}logical/`,
      });
      expect(problems(intoOther.stderr)).toBe('');
      expect(await snapshot(otherSchema)).toEqual(source);
    } finally {
      await server.close();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('copies the database as it is in a logical backup the server takes: the trash and every locale', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-logical-job-'));
    const server = await startTestServer(
      { DATABASE_URL: `sqlite:${join(dir, 'app.db')}`, UPLOADS_DIR: join(dir, 'uploads') },
      {
        overrides: {
          rateLimit: GENEROUS_LIMITS,
          backups: { schedule: '0 3 * * *', scheduleType: 'cron', keep: 2, to: join(dir, 'backups'), logical: true },
        },
      },
    );
    try {
      const admin = await server.user({ roles: ['ADMIN'] });
      const note = await server.call('POST', '/api/v1/notes', { token: admin.token, body: { title: 'binned' } });
      expect((await server.call('DELETE', `/api/v1/notes/${note.body.data.id}`, { token: admin.token })).status).toBe(
        200,
      );
      const faq = await server.call('POST', '/api/v1/faqs', {
        token: admin.token,
        body: { question: { en: 'Why?', de: 'Warum?' } },
      });
      expect(faq.status).toBe(201);
      const jobs = await server.call('GET', '/api/v1/scheduledJobs?limit=100', { token: admin.token });
      const job = jobs.body.data.items.find((item: { name: string }) => item.name === 'backup');
      expect(
        (await server.call('POST', `/api/v1/scheduledJobs/${job.id}/run`, { token: admin.token, body: {} })).status,
      ).toBe(202);
      await server.scheduler.idle();
      const source = await snapshot(`sqlite:${join(dir, 'app.db')}`);
      const [archive] = readdirSync(join(dir, 'backups')).filter((name) => name.endsWith('.tar.gz'));
      const target = join(mkdtempSync(join(tmpdir(), 'entigen-logical-restore-')), 'copy.db');
      const restored = await runCli(['restore', join(dir, 'backups', archive)], repoRoot, {
        DATABASE_URL: `sqlite:${target}`,
        UPLOADS_DIR: join(dir, 'restored-uploads'),
      });
      expect(problems(restored.stderr)).toBe('');
      const copy = await snapshot(`sqlite:${target}`);
      expect(copy.get('notes')).toEqual(source.get('notes'));
      expect(copy.get('notes')![0].trashedAt).toBeTruthy();
      expect(copy.get('faqs')).toEqual(source.get('faqs'));
    } finally {
      await server.close();
    }
  });

  it('runs on a schedule in the server, keeping the newest ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-scheduled-'));
    const server = await startTestServer(
      { DATABASE_URL: `sqlite:${join(dir, 'app.db')}`, UPLOADS_DIR: join(dir, 'uploads') },
      {
        overrides: {
          rateLimit: GENEROUS_LIMITS,
          backups: { schedule: '0 3 * * *', scheduleType: 'cron', keep: 2, to: join(dir, 'backups'), logical: false },
        },
      },
    );
    try {
      const admin = await server.user({ roles: ['ADMIN'] });
      const jobs = await server.call('GET', '/api/v1/scheduledJobs?limit=100', { token: admin.token });
      const job = jobs.body.data.items.find((item: { name: string }) => item.name === 'backup');
      expect(job).toMatchObject({ handler: 'entigenBackup', schedules: ['0 3 * * *'], enabled: true });
      for (let run = 0; run < 3; run++) {
        const started = await server.call('POST', `/api/v1/scheduledJobs/${job.id}/run`, {
          token: admin.token,
          body: {},
        });
        expect(started.status).toBe(202);
        await server.scheduler.idle();
      }
      const executions = await server.call('GET', `/api/v1/jobExecutions?jobId=${job.id}`, { token: admin.token });
      expect(executions.body.data.items.map((e: { status: string }) => e.status)).toEqual([
        'completed',
        'completed',
        'completed',
      ]);
      expect(readdirSync(join(dir, 'backups')).filter((name) => name.endsWith('.tar.gz'))).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});

/** The uploads config of the example app, for opening a storage the way the CLI does. */
function registryUploads() {
  return { driver: 'local' as const, dir: 'data/uploads', maxBytes: 10_000_000, thumbnails: { sizes: [] } };
}

async function* s3Backups(s3: S3Target): AsyncIterable<string> {
  const storage = openFileStorage(
    { ...registryUploads(), driver: 's3', s3: s3.withPrefix(`${s3.settings.prefix}backups/`) },
    repoRoot,
  );
  for await (const key of storage.list()) yield key;
}
