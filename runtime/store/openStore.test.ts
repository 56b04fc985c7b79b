import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { conformanceModel } from '../../test/conformance/storeConformance.js';
import { LocalStorage } from '../files/localStorage.js';
import { openStore } from './openStore.js';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('files that hold the data', () => {
  it('creates a SQLite database, its folder and its WAL owner-only', async () => {
    const root = mkdtempSync(join(tmpdir(), 'entigen-modes-'));
    const store = await openStore('sqlite:data/nested/app.db', root);
    try {
      await store.init(conformanceModel);
      await store.insert('things', {
        id: 'a'.repeat(24),
        ownerId: '0'.repeat(24),
        name: 'n',
        createdAt: '2024-01-01T00:00:00.000Z',
        updatedAt: '2024-01-01T00:00:00.000Z',
      });
      expect(mode(join(root, 'data'))).toBe(0o700);
      expect(mode(join(root, 'data', 'nested'))).toBe(0o700);
      expect(mode(join(root, 'data', 'nested', 'app.db'))).toBe(0o600);
      expect(mode(join(root, 'data', 'nested', 'app.db-wal'))).toBe(0o600);
    } finally {
      await store.close();
    }
  });

  it('writes a backup folder and file owner-only, media group-readable', async () => {
    const root = mkdtempSync(join(tmpdir(), 'entigen-modes-'));
    const backups = new LocalStorage(join(root, 'backups'), { ownerOnly: true });
    await backups.put('2026/backup.tar.gz', Readable.from([Buffer.from('x')]));
    expect(mode(join(root, 'backups', '2026'))).toBe(0o700);
    expect(mode(join(root, 'backups', '2026', 'backup.tar.gz'))).toBe(0o600);
    const media = new LocalStorage(join(root, 'uploads'));
    await media.put('a/b.png', Readable.from([Buffer.from('x')]));
    expect(mode(join(root, 'uploads', 'a', 'b.png'))).toBe(0o640);
  });
});
