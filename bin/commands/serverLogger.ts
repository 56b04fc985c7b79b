import { type DestinationStream, type Logger, pino, destination as pinoDestination } from 'pino';
import { logMixin } from '../../runtime/telemetry/tracing.js';

/**
 * Log lines waiting for a stdout that does not take them (a log shipper that stalled) are kept up
 * to this many bytes; later ones are dropped, so a stuck reader costs bounded memory, not all of it.
 */
export const MAX_PENDING_LOG_BYTES = 8 * 1024 * 1024;

/** Lines the JSON destination dropped because stdout did not take them (see MAX_PENDING_LOG_BYTES). */
export const logDrops = { lines: 0 };

let exiting = false;
let destination: (DestinationStream & { flushSync(): void; destroy(): void }) | undefined;

/**
 * JSON lines, one per event, unless a person is watching: on a terminal, outside production,
 * pino-pretty prints readable lines. LOG_FORMAT=json or LOG_FORMAT=pretty decides explicitly.
 *
 * JSON goes to stdout without blocking: a reader that stops reading (EAGAIN) makes lines wait, up
 * to MAX_PENDING_LOG_BYTES; a reader that is gone (EPIPE) makes logging stop. Neither blocks a
 * request, and neither keeps the process from exiting (releaseLog).
 */
export function serverLogger(env: NodeJS.ProcessEnv = process.env, tty = Boolean(process.stdout.isTTY)): Logger {
  const level = env.LOG_LEVEL ?? 'info';
  const format = env.LOG_FORMAT ?? (tty && env.NODE_ENV !== 'production' ? 'pretty' : 'json');
  if (format !== 'json' && format !== 'pretty') throw new Error(`LOG_FORMAT must be json or pretty, not "${format}"`);
  if (format === 'json') {
    const stream = pinoDestination({
      dest: 1,
      sync: false,
      maxLength: MAX_PENDING_LOG_BYTES,
      // While running, a full pipe is waited for in the background; at exit, not at all.
      retryEAGAIN: () => !exiting,
    });
    stream.on('drop', () => logDrops.lines++);
    // EPIPE is handled by pino (logging stops); an EAGAIN given up at exit is not worth a crash.
    stream.on('error', () => undefined);
    destination = stream as typeof destination;
    return pino({ level, mixin: logMixin }, stream);
  }
  return pino({
    level,
    mixin: logMixin,
    transport: {
      target: 'pino-pretty',
      options: { colorize: tty, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
    },
  });
}

/**
 * Before process.exit: writes what stdout takes now, gives up on the rest, and closes the
 * destination, so pino's own exit flush (which waits for a stalled reader forever) has nothing
 * to do.
 */
export function releaseLog(): void {
  exiting = true;
  const stream = destination;
  destination = undefined;
  if (!stream) return;
  try {
    stream.flushSync();
  } catch {
    // stdout does not take more: what is left is dropped.
  }
  try {
    stream.destroy();
  } catch {
    // Already closed.
  }
}
