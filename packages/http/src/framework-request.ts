/**
 * What the framework adapters share: adopting a request's deadline (serverTimeouts' or a new one) and the timeout error they raise.
 */
import { handlerLimitMs } from './deadline-policy.js';
import type { DeadlinePlan } from './options.js';
import { recordOf, RequestDeadline, type FrameworkAnswer, type RequestOwner } from './request-deadline.js';
import type { TimedRequest, TimedResponse } from './types.js';

/** The owner of a deadline an adapter made on a server serverTimeouts is not attached to: the channel reports it, nothing else listens. */
const STANDALONE: RequestOwner = {
  draining: false,
  timedOut() {},
  requestClosed() {},
};

/**
 * Gives the request the deadline `plan` says, answered by `answer` (through the response without
 * one): the record serverTimeouts (or an app-wide adapter) made for it, its deadline replaced (a
 * route's replaces the app's, longer or shorter), or a new one. Starts it and enters it for the
 * rest of this run.
 */
export function adoptRequest(
  req: TimedRequest,
  res: TimedResponse,
  plan: DeadlinePlan,
  answer?: FrameworkAnswer,
): RequestDeadline {
  let record = recordOf(res);
  if (record === undefined) record = new RequestDeadline(STANDALONE, plan, req, res);
  else record.plan = plan;
  record.answer = answer;
  record.start(handlerLimitMs(plan, req));
  return record;
}

/** The error an adapter hands its framework at a timeout, shaped as http-errors' are, with `code` as connect-timeout's. */
export interface DeadlineError extends Error {
  /** The status answered, `timeoutStatus`. */
  readonly status: number;
  readonly statusCode: number;
  /** The message is safe to show to the client (http-errors' flag). */
  readonly expose: true;
  /** `'ETIMEDOUT'`, as connect-timeout's. */
  readonly code: 'ETIMEDOUT';
  /** The limit that passed, in ms. */
  readonly limitMs: number;
}

/** The error for a request whose limit of `limitMs` passed. */
export function deadlineError(status: number, limitMs: number): DeadlineError {
  return Object.assign(new Error('Response timeout'), {
    status,
    statusCode: status,
    expose: true as const,
    code: 'ETIMEDOUT' as const,
    limitMs,
  });
}
