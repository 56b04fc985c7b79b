import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, Response } from 'express';
import { type LaneStages, routeRunner } from './entityLane.js';

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `server.adapter: node`: node:http serves the entity routes of the generated route table itself,
 * running the same stages and handlers Express runs, without Express's app (its request set-up
 * and final handler); every other request goes to the Express app unchanged. The request and
 * response get Express's prototypes, so the stages' helpers are the same.
 */
export function nodeListener(app: Express, stages: LaneStages): NodeListener {
  const run = routeRunner(stages);
  return function serve(incoming, outgoing) {
    const found = stages.routes.find(incoming.method ?? '', incoming.url ?? '');
    if (!found) return void app(incoming as Request, outgoing as Response);
    const req = incoming as Request;
    const res = outgoing as Response;
    req.res = res;
    res.req = req;
    // Born with them when startServer made the server (expressMessages.ts); set here otherwise.
    if (Object.getPrototypeOf(req) !== app.request) Object.setPrototypeOf(req, app.request);
    if (Object.getPrototypeOf(res) !== app.response) Object.setPrototypeOf(res, app.response);
    res.locals = Object.create(null);
    req.originalUrl = req.url;
    req.baseUrl = '';
    run(found, req, res, (error) => stages.errors(error, req, res, () => {}));
  };
}
