import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { loadRuntimeConfig } from '../../runtime/config/runtimeConfig.js';
import type { Registry } from '../../runtime/defineRegistry.js';
import type { JobHandler } from '../../runtime/jobs/scheduler.js';
import type { RepositoryWriter } from '../../runtime/repository.js';
import { startServer } from '../../runtime/server/startServer.js';
import type { Store } from '../../runtime/store/types.js';
import { reportFailure } from './reportFailure.js';
import { releaseLog, serverLogger } from './serverLogger.js';
import { stopWithLauncher } from './stopWithLauncher.js';

export interface ServeOptions {
  port?: string;
  host?: string;
  out: string;
}

interface GeneratedModule {
  registry?: Registry;
  repositories?: (store: Store, writer?: RepositoryWriter) => unknown;
}

export async function loadGenerated(root: string, out: string): Promise<GeneratedModule & { registry: Registry }> {
  const index = resolve(root, out, 'index.ts');
  if (!existsSync(index)) throw new Error(`${join(out, 'index.ts')} not found; run \`entigen build\` first`);
  const generated = (await tsImport(pathToFileURL(index).href, import.meta.url)) as GeneratedModule;
  if (!generated.registry) throw new Error(`${join(out, 'index.ts')} exports no registry; run \`entigen build\``);
  return generated as GeneratedModule & { registry: Registry };
}

/** Loads the project's generated registry (TypeScript, through tsx). */
export async function loadRegistry(root: string, out: string): Promise<Registry> {
  return (await loadGenerated(root, out)).registry;
}

/** The module named by jobs.handlers: its exported functions (or its default export's) by name. */
export async function loadHandlers(root: string, path: string | undefined): Promise<Record<string, JobHandler>> {
  if (!path) return {};
  const file = resolve(root, path);
  if (!existsSync(file)) throw new Error(`jobs.handlers names ${path}, which does not exist`);
  const module = (await tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>;
  const exported = {
    ...(typeof module.default === 'object' && module.default ? (module.default as Record<string, unknown>) : {}),
    ...module,
  };
  return Object.fromEntries(
    Object.entries(exported).filter(([name, value]) => name !== 'default' && typeof value === 'function'),
  ) as Record<string, JobHandler>;
}

export async function serveCommand(options: ServeOptions): Promise<void> {
  try {
    const root = resolve('.');
    const port = options.port === undefined ? undefined : Number(options.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
      throw new Error(`--port must be an integer from 0 to 65535`);
    const generated = await loadGenerated(root, options.out);
    const handlers = await loadHandlers(root, loadRuntimeConfig(root, process.env).jobs.handlers);
    const running = await startServer({
      registry: generated.registry,
      repositories: generated.repositories,
      handlers,
      root,
      port,
      host: options.host,
      logger: serverLogger(),
    });
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      running.ctx.logger.info(
        { signal, graceMs: running.config.server.shutdownGraceMs },
        'shutting down: finishing requests in flight',
      );
      running.close().then(
        () => {
          running.ctx.logger.info('stopped');
          releaseLog();
          process.exit(0);
        },
        (error) => {
          running.ctx.logger.error({ err: error }, 'shutdown failed');
          releaseLog();
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    stopWithLauncher(stop);
  } catch (error) {
    reportFailure(error);
  }
}
