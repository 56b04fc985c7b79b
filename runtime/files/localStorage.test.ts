import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { LocalStorage } from './localStorage.js';

describe('the local file storage', () => {
  it('writes whole files, reads ranges, lists and removes by asset, and never leaves its folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'entigen-local-'));
    const storage = new LocalStorage(dir);
    await storage.put('aaaaaaaaaaaaaaaaaaaaaaaa/file.txt', Readable.from(['hello ', 'world']), 'text/plain');
    await storage.put('aaaaaaaaaaaaaaaaaaaaaaaa/thumb.png', Readable.from(['x']), 'image/png');
    expect(await storage.size('aaaaaaaaaaaaaaaaaaaaaaaa/file.txt')).toBe(11);
    const part = await storage.get('aaaaaaaaaaaaaaaaaaaaaaaa/file.txt', { start: 6, end: 10 });
    expect(part?.size).toBe(11);
    expect(await text(part!.body)).toBe('world');
    expect(await storage.get('aaaaaaaaaaaaaaaaaaaaaaaa/none')).toBeUndefined();
    const keys: string[] = [];
    for await (const key of storage.list()) keys.push(key);
    expect(keys.sort()).toEqual(['aaaaaaaaaaaaaaaaaaaaaaaa/file.txt', 'aaaaaaaaaaaaaaaaaaaaaaaa/thumb.png']);
    // A stream that fails leaves nothing, not even a partial file.
    const failing = new Readable({
      read() {
        this.destroy(new Error('client went away'));
      },
    });
    await expect(storage.put('bbbbbbbbbbbbbbbbbbbbbbbb/file.bin', failing, 'x')).rejects.toThrow('client went away');
    expect(await storage.size('bbbbbbbbbbbbbbbbbbbbbbbb/file.bin')).toBeUndefined();
    await expect(storage.size('../outside')).rejects.toThrow(/leaves the upload folder/);
    await expect(storage.put('/etc/passwd', Readable.from(['x']), 'x')).rejects.toThrow(/leaves the upload folder/);
    await storage.removeAll('aaaaaaaaaaaaaaaaaaaaaaaa');
    const left: string[] = [];
    for await (const key of storage.list()) left.push(key);
    expect(left).toEqual([]);
  });
});
