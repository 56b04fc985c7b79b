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
 */
export function expressMessageClasses(app: Express): MessageClasses {
  function Request(this: IncomingMessage, ...args: ConstructorParameters<typeof IncomingMessage>) {
    IncomingMessage.apply(this, args);
  }
  Request.prototype = app.request;
  function Response(this: ServerResponse, ...args: ConstructorParameters<typeof ServerResponse>) {
    ServerResponse.apply(this, args);
  }
  Response.prototype = app.response;
  return {
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
}
