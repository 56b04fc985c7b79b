import { describe, expect, it } from 'vitest';
import { serverLogger } from './serverLogger.js';

/** pino keeps its destination under Symbol(pino.stream): a transport (pino-pretty) writes through a worker's ThreadStream. */
const format = (env: NodeJS.ProcessEnv, tty: boolean) => {
  const logger = serverLogger(env, tty);
  const symbol = Object.getOwnPropertySymbols(logger).find((s) => String(s) === 'Symbol(pino.stream)')!;
  const stream = (logger as unknown as Record<symbol, { constructor: { name: string } }>)[symbol];
  return stream.constructor.name === 'ThreadStream' ? 'pretty' : 'json';
};

describe('serverLogger', () => {
  it('prints readable lines on a terminal outside production, JSON otherwise, and honours LOG_FORMAT', () => {
    expect(format({}, true)).toBe('pretty');
    expect(format({}, false)).toBe('json');
    expect(format({ NODE_ENV: 'production' }, true)).toBe('json');
    expect(format({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(format({ LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
    expect(() => serverLogger({ LOG_FORMAT: 'xml' }, false)).toThrow(/LOG_FORMAT must be json or pretty/);
  });
});
