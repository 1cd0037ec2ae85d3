/**
 * `@tickwheel/http/koa`: `deadline(options)`, request deadlines as koa 3 middleware, ending with `ctx.throw`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { adoptRequest } from './framework-request.js';
import { middlewarePlan } from './options.js';
import { causedByEndedDeadline } from './rejection-guard.js';
import { endTimedOut } from './timeout-answer.js';
import type { DeadlineMiddlewareOptions, HttpTimeoutKind, TimeoutEvent } from './types.js';

export type { DeadlineMiddlewareOptions } from './types.js';

/** As much of koa's context as the middleware uses (koa's `Context` is one). */
export interface KoaContextLike {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  throw(status: number, message: string, properties: object): never;
}

/** A koa middleware. */
export type KoaDeadlineMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<unknown>;

/**
 * The koa answer: before the response started, the middleware's promise rejects (`reject`) with
 * the error of `ctx.throw(timeoutStatus, …)` and koa answers it (its `ctx.onerror`); a later
 * `ctx.body = …` of the handler finds the headers sent, where koa itself ignores it. After, a cut.
 */
function answerKoa(
  ctx: KoaContextLike,
  reject: (reason: unknown) => void,
  kind: HttpTimeoutKind,
  status: number,
  limitMs: number,
): TimeoutEvent['outcome'] {
  if (ctx.res.headersSent) return endTimedOut(ctx.req, ctx.res, status, kind);
  try {
    ctx.throw(status, 'Response timeout', { code: 'ETIMEDOUT', expose: true, limitMs });
  } catch (error) {
    reject(error);
  }
  return 'answered';
}

/** Rethrows an error of the middleware after ours, unless the request's ended deadline caused it (rejection-guard.ts). */
function unlessEnded(error: unknown): void {
  if (!causedByEndedDeadline(error)) throw error;
}

/**
 * Koa middleware that gives the request a deadline: `currentDeadline()` in the middleware after it
 * (and in all the async work it starts), its `signal` aborting at the deadline or when the client
 * goes away. When it passes before the response started, the chain ends with
 * `ctx.throw(timeoutStatus, 'Response timeout')` (an error with `code: 'ETIMEDOUT'` and
 * `expose: true`), and koa answers it; after, the connection is cut. Per route (koa-router) it
 * replaces the app's deadline, longer or shorter.
 *
 * @throws TypeError/RangeError for a bad option
 */
export function deadline(options?: DeadlineMiddlewareOptions): KoaDeadlineMiddleware {
  const plan = middlewarePlan(options);
  return function deadlineMiddleware(ctx, next) {
    let reject!: (reason: unknown) => void;
    const timedOut = new Promise<never>((_resolve, rejectWith) => (reject = rejectWith));
    const record = adoptRequest(ctx.req, ctx.res, plan, (kind, status, limitMs) =>
      answerKoa(ctx, reject, kind, status, limitMs),
    );
    if (!record.open) return timedOut;
    if (record.scope === undefined) return next();
    return Promise.race([next().catch(unlessEnded), timedOut]);
  };
}
