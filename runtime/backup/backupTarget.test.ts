import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LocalStorage } from '../files/localStorage.js';
import { S3Storage } from '../files/s3Storage.js';
import { BACKUP_NAME, backupName, backupPlace, listBackups, pruneBackups } from './backupTarget.js';

describe('backup places', () => {
  it('reads folders, files and s3 addresses, and refuses what is neither', () => {
    const root = '/srv/app';
    expect(backupPlace('backups/', root, {}).name).toBeUndefined();
    expect(backupPlace('backups/', root, {}).storage).toBeInstanceOf(LocalStorage);
    expect(backupPlace('/var/b/app.tar.gz', root, {}).name).toBe('app.tar.gz');
    const prefix = backupPlace('s3://my-bucket/nightly', root, { S3_ENDPOINT: 'http://127.0.0.1:9000' });
    expect(prefix.storage).toBeInstanceOf(S3Storage);
    expect(prefix.name).toBeUndefined();
    expect(backupPlace('s3://my-bucket/a/b/x.tar.gz', root, {}).name).toBe('x.tar.gz');
    expect(() => backupPlace('s3://', root, {})).toThrow(/not an S3 address/);
    expect(() => backupPlace('s3://UPPER/x', root, {})).toThrow(/not an S3 address/);
  });

  it('names backups so that they sort by time, and keeps the newest', async () => {
    const names = [0, 1, 2, 3].map((day) => backupName(new Date(Date.UTC(2026, 10, 20 + day, 3))));
    for (const name of names) expect(name).toMatch(BACKUP_NAME);
    expect([...names].sort()).toEqual(names);
    const storage = new LocalStorage(mkdtempSync(join(tmpdir(), 'entigen-backups-')));
    for (const name of [...names].reverse()) await storage.put(name, Readable.from(['x']));
    await storage.put('notes.txt', Readable.from(['not a backup']));
    expect(await listBackups(storage)).toEqual(names);
    expect(await pruneBackups(storage, 2)).toEqual(names.slice(0, 2));
    expect(await listBackups(storage)).toEqual(names.slice(2));
    expect(await storage.size('notes.txt')).toBe(12);
  });
});
