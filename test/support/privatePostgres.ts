import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A PostgreSQL cluster of the test's own (initdb in a temporary folder, its own port), so the shared server stays up. */
export interface PrivatePostgres {
  url: string;
  stop(): void;
  start(): void;
}

const asPostgres = (args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'pipe' });

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const version = readdirSync('/usr/lib/postgresql').sort().at(-1)!;
  const bin = `/usr/lib/postgresql/${version}/bin`;
  const dir = mkdtempSync(join(tmpdir(), 'entigen-pg-'));
  chownSync(
    dir,
    Number(execFileSync('id', ['-u', 'postgres']).toString()),
    Number(execFileSync('id', ['-g', 'postgres']).toString()),
  );
  const data = join(dir, 'data');
  asPostgres([`${bin}/initdb`, '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on`;
  const start = () =>
    void asPostgres([`${bin}/pg_ctl`, '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const stop = () => void asPostgres([`${bin}/pg_ctl`, '-D', data, '-m', 'fast', '-w', 'stop']);
  start();
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, start, stop };
}
