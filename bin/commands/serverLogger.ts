import { type Logger, pino } from 'pino';

/**
 * JSON lines, one per event, unless a person is watching: on a terminal, outside production,
 * pino-pretty prints readable lines. LOG_FORMAT=json or LOG_FORMAT=pretty decides explicitly.
 */
export function serverLogger(env: NodeJS.ProcessEnv = process.env, tty = Boolean(process.stdout.isTTY)): Logger {
  const level = env.LOG_LEVEL ?? 'info';
  const format = env.LOG_FORMAT ?? (tty && env.NODE_ENV !== 'production' ? 'pretty' : 'json');
  if (format !== 'json' && format !== 'pretty') throw new Error(`LOG_FORMAT must be json or pretty, not "${format}"`);
  if (format === 'json') return pino({ level });
  return pino({
    level,
    transport: {
      target: 'pino-pretty',
      options: { colorize: tty, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
    },
  });
}
