import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import type { Registry } from '../../runtime/defineRegistry.js';
import { startServer } from '../../runtime/server/startServer.js';
import { reportFailure } from './reportFailure.js';

export interface ServeOptions {
  port?: string;
  host?: string;
  out: string;
}

/** Loads the project's generated registry (TypeScript, through tsx) and serves it. */
export async function loadRegistry(root: string, out: string): Promise<Registry> {
  const index = resolve(root, out, 'index.ts');
  if (!existsSync(index)) throw new Error(`${join(out, 'index.ts')} not found; run \`entigen build\` first`);
  const generated = (await tsImport(pathToFileURL(index).href, import.meta.url)) as { registry?: Registry };
  if (!generated.registry) throw new Error(`${join(out, 'index.ts')} exports no registry; run \`entigen build\``);
  return generated.registry;
}

export async function serveCommand(options: ServeOptions): Promise<void> {
  try {
    const root = resolve('.');
    const port = options.port === undefined ? undefined : Number(options.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new Error(`--port must be an integer from 0 to 65535`);
    const registry = await loadRegistry(root, options.out);
    const running = await startServer({ registry, root, port, host: options.host });
    const stop = (signal: string) => {
      running.ctx.logger.info({ signal, graceMs: running.config.server.shutdownGraceMs }, 'shutting down: finishing requests in flight');
      running.close().then(
        () => {
          running.ctx.logger.info('stopped');
          process.exit(0);
        },
        (error) => {
          running.ctx.logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  } catch (error) {
    reportFailure(error);
  }
}
