import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { type AddressInfo, Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import express, { type Request, type Response } from 'express';
import { describe, expect, it } from 'vitest';
import { expressMessageClasses } from './expressMessages.js';

describe('expressMessageClasses', () => {
  it('makes requests and responses that carry the app prototypes from birth and work as node:http and Express ones', async () => {
    const app = express();
    const born: boolean[] = [];
    app.get('/hello/:name', (req, res) => {
      res.status(201).json({ name: req.params.name, path: req.path, ip: typeof req.ip, query: req.query.q });
    });
    const server = createServer(expressMessageClasses(app), (req, res) => {
      born.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response);
      born.push(req instanceof IncomingMessage && res instanceof ServerResponse);
      app(req, res);
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/hello/ada?q=1`);
      expect(answer.status).toBe(201);
      expect(await answer.json()).toEqual({ name: 'ada', path: '/hello/ada', ip: 'string', query: '1' });
      // A body still streams through the request (it is a Readable), and 404s are Express's.
      const posted = await fetch(`http://127.0.0.1:${port}/nowhere`, { method: 'POST', body: 'x'.repeat(100_000) });
      expect(posted.status).toBe(404);
      expect(born).toEqual([true, true, true, true]);
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });

  it('makes objects V8 keeps with fast properties, as node:http its own', () => {
    setFlagsFromString('--allow-natives-syntax');
    const fast = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;
    const app = express();
    const classes = expressMessageClasses(app);
    const req = new classes.IncomingMessage(new Socket());
    const res = new classes.ServerResponse(req);
    res.setHeader('Content-Type', 'application/json');
    expect([fast(req), fast(res)]).toEqual([true, true]);
    // The app's own properties came along to the prototypes that took its place.
    expect([(res as unknown as Response).app, (req as unknown as Request).app]).toEqual([app, app]);
    expect(fast(new ServerResponse(new IncomingMessage(new Socket())))).toBe(true);
  });
});
