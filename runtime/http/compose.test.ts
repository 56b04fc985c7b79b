import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { compose, MountTable } from './compose.js';

const run = (handler: ReturnType<typeof compose>, req: Partial<Request> = {}) =>
  new Promise<unknown>((resolve) => handler(req as Request, {} as Response, resolve as NextFunction));

describe('compose', () => {
  it('runs the middlewares in order and goes on after the last', async () => {
    const seen: string[] = [];
    const step = (name: string) => (_req: Request, _res: Response, next: NextFunction) => {
      seen.push(name);
      next();
    };
    expect(await run(compose(step('a'), undefined, step('b')))).toBeUndefined();
    expect(seen).toEqual(['a', 'b']);
  });

  it('skips the rest on next(error), a throw or a rejected promise', async () => {
    const never = () => {
      throw new Error('must not run');
    };
    const failing = [
      (_req: Request, _res: Response, next: NextFunction) => next(new Error('passed')),
      () => {
        throw new Error('thrown');
      },
      async () => {
        await Promise.resolve();
        throw new Error('rejected');
      },
    ];
    for (const [handler, message] of failing.map((h, i) => [h, ['passed', 'thrown', 'rejected'][i]] as const))
      expect(((await run(compose(handler, never))) as Error).message).toBe(message);
  });

  it('waits for an async middleware that calls next later', async () => {
    const seen: string[] = [];
    const slow = async (_req: Request, _res: Response, next: NextFunction) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push('slow');
      next();
    };
    const after = (_req: Request, _res: Response, next: NextFunction) => {
      seen.push('after');
      next();
    };
    await run(compose(slow, after));
    expect(seen).toEqual(['slow', 'after']);
  });
});

describe('MountTable', () => {
  it('refuses a mount point that is not one segment under its base', () => {
    const table = new MountTable('/api/v1');
    const none = (_req: Request, _res: Response, next: NextFunction) => next();
    expect(() => table.add('/api/v1', none, none)).toThrow(/one segment/);
    expect(() => table.add('/api/v1/a/b', none, none)).toThrow(/one segment/);
    expect(() => table.add('/other/a', none, none)).toThrow(/one segment/);
  });

  it('passes over paths outside its base or with an unknown first segment', async () => {
    const table = new MountTable('/api/v1');
    table.add(
      '/api/v1/things',
      (_req, _res, next) => next(),
      () => {
        throw new Error('must not run');
      },
    );
    for (const path of ['/', '/api/v1', '/api/v1/', '/api/v1/other', '/api/v2/things', '/api/v1/thingsx'])
      expect(await run(table.handler(), { path } as Partial<Request>)).toBeUndefined();
  });
});
