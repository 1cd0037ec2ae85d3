/**
 * `@tickwheel/http/fastify`: `deadlinePlugin`, request deadlines for fastify 5, per route in `config.deadline`.
 */
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { adoptRequest, deadlineError } from './framework-request.js';
import { middlewarePlan, type DeadlinePlan } from './options.js';
import { causedByEndedDeadline } from './rejection-guard.js';
import { recordOf } from './request-deadline.js';
import { endTimedOut } from './timeout-answer.js';
import type { DeadlineMiddlewareOptions, HttpTimeoutKind, TimeoutEvent } from './types.js';

export type { DeadlineMiddlewareOptions } from './types.js';
export type { DeadlineError } from './framework-request.js';

/** What a route puts in its `config` for its own deadline: `{ config: { deadline: { timeoutMs: 600_000 } } }`. */
export interface DeadlineRouteConfig {
  deadline?: DeadlineMiddlewareOptions;
}

/** The options fastify itself passes along with a plugin's own (`app.register(plugin, { prefix })`). */
const FASTIFY_KEYS = new Set(['prefix', 'logLevel', 'logSerializers']);

/**
 * The fastify answer, as fastify's own `handlerTimeout` gives it: `reply.send(err)` through the
 * app's error handler before the response started (a late `reply.send` of the handler is then
 * refused by fastify itself, with its "Reply was already sent" warning, never an error); a cut
 * after. A reply the handler hijacked is its own: it is cut as a plain response would be.
 */
function answerFastify(
  reply: FastifyReply,
  kind: HttpTimeoutKind,
  status: number,
  limitMs: number,
): TimeoutEvent['outcome'] {
  if (reply.sent || reply.raw.headersSent) return endTimedOut(reply.request.raw, reply.raw, status, kind);
  reply.code(status).send(deadlineError(status, limitMs));
  return 'answered';
}

/**
 * A fastify plugin that gives each request a deadline: `currentDeadline()` in its hooks after
 * `onRequest` and in its handler (and all the async work they start), its `signal` aborting at
 * the deadline or when the client goes away. Options as {@link DeadlineMiddlewareOptions}; a
 * route's `config.deadline` replaces them for that route, longer or shorter. When the deadline
 * passes before the response started, `reply.send()` gets a `DeadlineError` (`statusCode` =
 * `timeoutStatus`, `code: 'ETIMEDOUT'`) and the app's error handler answers; after, the
 * connection is cut. A rejection of the handler that the ended deadline caused (its fetch's
 * `TimeoutError`, an `AbortError` once the client went away) is dropped, not logged or handed to
 * the error handler. It lives beside fastify's own `handlerTimeout` and `request.signal`:
 * whichever fires first answers.
 *
 * Registered on the root (it skips fastify's encapsulation, as fastify-plugin would), so every
 * route gets it: `await app.register(deadlinePlugin, { timeoutMs: 5_000 })`.
 *
 * @throws TypeError/RangeError for a bad option, or a bad `config.deadline` when its route is added
 */
export const deadlinePlugin: FastifyPluginCallback<DeadlineMiddlewareOptions> = (instance, options, done) => {
  const own = Object.fromEntries(Object.entries(options).filter(([key]) => !FASTIFY_KEYS.has(key)));
  const appPlan = middlewarePlan(own);
  /** Each route's plan, by its config object, checked when the route is added. */
  const routePlans = new WeakMap<object, DeadlinePlan>();
  const planOf = (config: unknown): DeadlinePlan => {
    const routeOptions = (config as DeadlineRouteConfig | undefined)?.deadline;
    if (routeOptions === undefined) return appPlan;
    let plan = routePlans.get(config as object);
    if (plan === undefined) {
      // The route's options over the app's, checked together as one set of options.
      plan = middlewarePlan({ ...own, ...routeOptions }, 'config.deadline');
      routePlans.set(config as object, plan);
    }
    return plan;
  };
  instance.addHook('onRoute', (route: RouteOptions) => {
    planOf(route.config);
    route.handler = quietAfterEnd(route.handler);
  });
  instance.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, hookDone: () => void) => {
    adoptRequest(request.raw, reply.raw, planOf(request.routeOptions.config), (kind, status, limitMs) =>
      answerFastify(reply, kind, status, limitMs),
    );
    hookDone();
  });
  // The handler runs after the body was read, in the context of its last chunk, not this one's.
  instance.addHook('preHandler', (_request: FastifyRequest, reply: FastifyReply, hookDone: () => void) => {
    recordOf(reply.raw)?.enter();
    hookDone();
  });
  done();
};

/**
 * The route's handler, its rejection dropped when the request's ended deadline caused it
 * (rejection-guard.ts): fastify would log it as an error, or hand it to the app's error handler
 * after the client went away. Every other outcome passes through as it was.
 */
function quietAfterEnd(handler: RouteOptions['handler']): RouteOptions['handler'] {
  return function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    const result: unknown = handler.call(this, request, reply);
    return result instanceof Promise ? result.catch(unlessEnded) : result;
  };
}

function unlessEnded(error: unknown): undefined {
  if (causedByEndedDeadline(error)) return undefined;
  throw error;
}

// fastify-plugin's markers, set by hand (no dependency): skip encapsulation, and a name in fastify's plugin tree.
Object.assign(deadlinePlugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: '@tickwheel/http/fastify',
});
