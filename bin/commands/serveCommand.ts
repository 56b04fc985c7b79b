import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Registry } from '../../runtime/context/defineRegistry.js';
import type { JobHandler } from '../../runtime/jobs/scheduler.js';
import type { RepositoryWriter } from '../../runtime/repository.js';
import { startServer } from '../../runtime/server/startServer.js';
import type { Store } from '../../runtime/store/types.js';
import { loadCheckedConfig } from './checkConfigFile.js';
import { importProjectModules, type LoadedFrom } from './projectModules.js';
import { reportFailure } from './reportFailure.js';
import { boundHeapGrowth } from './serverHeap.js';
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

/** The project's generated module: its registry and repositories. */
export async function loadGenerated(root: string, out: string): Promise<GeneratedModule & { registry: Registry }> {
  return (await loadProject(root, out, undefined)).generated;
}

/** Loads the project's generated registry. */
export async function loadRegistry(root: string, out: string): Promise<Registry> {
  return (await loadGenerated(root, out)).registry;
}

/**
 * The generated module and the job handlers (the module jobs.handlers names: its exported
 * functions, or its default export's, by name), compiled together so a module both import is
 * one module.
 */
export async function loadProject(
  root: string,
  out: string,
  handlersPath: string | undefined,
): Promise<{
  generated: GeneratedModule & { registry: Registry };
  handlers: Record<string, JobHandler>;
  loaded: LoadedFrom;
}> {
  const index = resolve(root, out, 'index.ts');
  if (!existsSync(index)) throw new Error(`${join(out, 'index.ts')} not found; run \`entigen build\` first`);
  const handlersFile = handlersPath ? resolve(root, handlersPath) : undefined;
  if (handlersFile && !existsSync(handlersFile))
    throw new Error(`jobs.handlers names ${handlersPath}, which does not exist`);
  const { modules, loaded } = await importProjectModules(root, handlersFile ? [index, handlersFile] : [index]);
  const [generated, handlerModule] = modules as [GeneratedModule, Record<string, unknown> | undefined];
  if (!generated.registry) throw new Error(`${join(out, 'index.ts')} exports no registry; run \`entigen build\``);
  return {
    generated: generated as GeneratedModule & { registry: Registry },
    handlers: handlerModule ? handlersOf(handlerModule) : {},
    loaded,
  };
}

function handlersOf(module: Record<string, unknown>): Record<string, JobHandler> {
  const exported = {
    ...(typeof module.default === 'object' && module.default ? (module.default as Record<string, unknown>) : {}),
    ...module,
  };
  return Object.fromEntries(
    Object.entries(exported).filter(([name, value]) => name !== 'default' && typeof value === 'function'),
  ) as Record<string, JobHandler>;
}

export async function serveCommand(options: ServeOptions): Promise<void> {
  boundHeapGrowth();
  try {
    const root = resolve('.');
    const port = options.port === undefined ? undefined : Number(options.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
      throw new Error(`--port must be an integer from 0 to 65535`);
    const config = loadCheckedConfig(root, 'the server did not start', process.env);
    const { generated, handlers, loaded } = await loadProject(root, options.out, config.jobs.handlers);
    const logger = serverLogger();
    if (loaded.loader === 'bundle') logger.info(loaded, 'project modules loaded from their compiled bundle');
    else logger.info(loaded, 'project modules loaded through tsx');
    const running = await startServer({
      registry: generated.registry,
      repositories: generated.repositories,
      handlers,
      root,
      config,
      port,
      host: options.host,
      logger,
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
