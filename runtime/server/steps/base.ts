import { join } from 'node:path';
import { type Logger, pino } from 'pino';
import { loadRuntimeConfig, type RuntimeConfig } from '../../config/runtimeConfig.js';
import { loadSecrets, type Secrets } from '../../crypto/secrets.js';
import { OperatorMetrics } from '../../health/operatorMetrics.js';
import { packageVersion } from '../../model/packageRoot.js';
import { startTracing, type Tracing } from '../../telemetry/startTracing.js';
import { logMixin } from '../../telemetry/tracing.js';
import type { StartOptions } from '../options.js';

/** What every later step reads: the environment, the log, the configuration, the secrets, the metrics. */
export interface Base {
  options: Omit<StartOptions, 'port' | 'host'>;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  config: RuntimeConfig;
  secrets: Secrets;
  operator: OperatorMetrics;
  now: () => Date;
  /** OpenTelemetry's SDK, when an exporter is configured (withTracing). */
  tracing?: Tracing;
}

/** The first step: settings from the project folder and the environment, nothing opened yet. */
export function base(options: Omit<StartOptions, 'port' | 'host'>): Base {
  const env = options.env ?? process.env;
  const logger = options.logger ?? pino({ level: env.LOG_LEVEL ?? 'info', mixin: logMixin });
  return {
    options,
    env,
    logger,
    config: { ...(options.config ?? loadRuntimeConfig(options.root, env)), ...options.overrides },
    secrets: loadSecrets({
      env,
      devFile: join(options.root, 'data', 'secrets.json'),
      warn: (message) => logger.warn(message),
    }),
    operator: new OperatorMetrics(),
    now: options.now ?? (() => new Date()),
  };
}

/**
 * Traces, when the config or the environment name an exporter: started before the store opens,
 * so its calls are traced from the first one.
 */
export async function withTracing(settings: Base): Promise<Base> {
  const tracing = await startTracing(
    settings.config.telemetry,
    settings.env,
    { name: settings.options.registry.model.app.name, version: packageVersion() },
    (fields, message) => settings.logger.warn(fields, message),
  );
  return tracing ? { ...settings, tracing } : settings;
}
