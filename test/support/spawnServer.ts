import { type ChildProcess, spawn } from 'node:child_process';
import { cliPath, repoRoot } from './cli.js';

export const ADMIN_ENV = {
  ENTIGEN_ADMIN_EMAIL: 'admin@example.test',
  ENTIGEN_ADMIN_PASSWORD: 'correct horse battery staple!',
};

export interface SpawnedServer {
  url: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** `entigen serve` as a real process on a free port (or `port`); resolves once it listens. */
export function spawnServer(env: Record<string, string>, cwd: string = repoRoot, port = 0): Promise<SpawnedServer> {
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd,
    env: { ...process.env, SESSION_SECRET: 'spawn-test', LOG_LEVEL: 'info', ...ADMIN_ENV, ...env },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 45_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], child, output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
}

/** A session token of the administrator that ADMIN_ENV creates at start. */
export async function adminToken(url: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN_ENV.ENTIGEN_ADMIN_EMAIL, password: ADMIN_ENV.ENTIGEN_ADMIN_PASSWORD }),
  });
  return ((await res.json()) as { token: string }).token;
}

/**
 * test/support/serverChild.ts as a process (startServer with test settings, see there); resolves
 * once it listens. `env` adds to this process's environment (DATABASE_URL at least).
 */
export function spawnChildServer(env: Record<string, string>): Promise<SpawnedServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/serverChild.ts'], {
    cwd: repoRoot,
    env: { ...process.env, ...ADMIN_ENV, ...env },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /\{"url":"([^"]+)"\}/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], child, output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
}
