/**
 * `@tickwheel/http/express`: `deadline(options)`, request deadlines as express middleware (express 4 and 5).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { adoptRequest } from './framework-request.js';
import { middlewarePlan } from './options.js';
import type { DeadlineMiddlewareOptions } from './types.js';

export type { DeadlineMiddlewareOptions } from './types.js';

/** express's `next`, as much of it as the middleware calls. */
export type NextFunction = (err?: unknown) => void;

/** An express middleware, typed by node:http's request and response (express's extend them). */
export type DeadlineMiddleware = (req: IncomingMessage, res: ServerResponse, next: NextFunction) => void;

/**
 * The express answer is the wire answer (timeout-answer.ts), and the timeout does not go to
 * `next(err)`. An error handler answering it (express's own final handler does) would write
 * through the response object and mark its headers sent, so the handler's own late `res.json()`
 * would throw ERR_HTTP_HEADERS_SENT: the failure connect-timeout's users guard every step
 * against with `req.timedout`. The timeout is reported on `tickwheel:http:timeout` and by
 * serverTimeouts' `'timeout'` event instead.
 */
/**
 * Express middleware that gives the request a deadline: `currentDeadline()` in the handlers after
 * it (and in all the async work they start), its `signal` aborting at the deadline or when the
 * client goes away. When it passes before the response started, the client gets `timeoutStatus`
 * with a short body and every later `res.json`/`res.send`/`res.end` of the handler is dropped
 * without an error (errors of the handler itself still go to `next(err)` as usual). After the
 * response started the connection is cut.
 *
 * App-wide (`app.use(deadline({ timeoutMs: 5_000 }))`) or per route, where it replaces the
 * app's deadline, longer or shorter: `app.get('/report', deadline({ timeoutMs: 600_000 }), handler)`.
 * On a server with `serverTimeouts` attached it replaces that request's deadline too.
 *
 * @throws TypeError/RangeError for a bad option
 */
export function deadline(options?: DeadlineMiddlewareOptions): DeadlineMiddleware {
  const plan = middlewarePlan(options);
  return function deadlineMiddleware(req, res, next) {
    const record = adoptRequest(req, res, plan);
    if (record.open) next();
  };
}
