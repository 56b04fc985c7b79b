import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection, createServer } from 'node:net';

/** A redis-server of the test's own on a free port, so a test may stop and start it; the shared one stays up. */
export interface PrivateRedis {
  url: string;
  port: number;
  /** Kills the server (SIGKILL: what a crash looks like to its clients) and waits until it is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port and waits until it answers. */
  start(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once the port answers PING with PONG. */
async function answers(port: number, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server on port ${port} did not answer`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {
          stdio: 'ignore',
        },
      );
      await answers(port);
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill('SIGKILL');
      });
    },
  };
  await redis.start();
  return redis;
}
