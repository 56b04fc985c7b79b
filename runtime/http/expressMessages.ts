import { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';

export interface MessageClasses {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

/**
 * Request and response classes for node:http whose objects are born with the app's Express
 * prototypes. Express gives every request and response its prototypes with
 * Object.setPrototypeOf, and V8 answers each such change with a new hidden class: the code that
 * touches them deoptimizes, and requests stay reachable until a full collection (a plain Express
 * app on node:http measured 2.5x faster with this and kept a flat heap). With the prototypes set
 * at birth, Express's own setPrototypeOf finds them in place and changes nothing.
 *
 * The classes extend node:http's, and the app's `request` and `response` become their
 * prototypes (with the same properties and the same Express prototypes behind them). A plain
 * function calling `ServerResponse.call(this)` would do too, but V8 sizes an object by the
 * constructor that `new` ran: one that adds node:http's forty-odd properties to an object its own
 * constructor did not plan for turns it into a dictionary, whose every property read is a lookup.
 */
export function expressMessageClasses(app: Express): MessageClasses {
  class Request extends IncomingMessage {}
  class Response extends ServerResponse {}
  app.request = adopt(Request.prototype, app.request) as Express['request'];
  app.response = adopt(Response.prototype, app.response) as Express['response'];
  return { IncomingMessage: Request, ServerResponse: Response as unknown as typeof ServerResponse };
}

/** `target` in place of `source`: source's own properties and prototype. */
function adopt(target: object, source: object): object {
  if (target === source) return target;
  const { constructor: _, ...own } = Object.getOwnPropertyDescriptors(source);
  Object.defineProperties(target, own);
  Object.setPrototypeOf(target, Object.getPrototypeOf(source));
  return target;
}
