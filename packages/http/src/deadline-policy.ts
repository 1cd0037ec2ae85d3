/**
 * How long a request's handler deadline is: the route's or the default, shortened by the caller's header, capped.
 */
import { callerLimitFromRaw, lastCallerHeader } from './deadline-headers.js';
import type { DeadlinePlan } from './options.js';
import type { TimedRequest } from './types.js';

/**
 * Where the last {@link handlerLimitMs} took its limit from, read right after the call: one of
 * the plan's constant strings, so working it out allocates nothing per request.
 */
let lastSource = '';

/**
 * The handler deadline `plan` gives `req`, in ms (Infinity: none). Where it came from is then
 * {@link lastLimitSource}.
 */
export function handlerLimitMs(plan: DeadlinePlan, req: TimedRequest): number {
  let limitMs = plan.limitMs;
  let source = plan.limitSource;
  if (plan.timeoutFor !== undefined) {
    const routeMs = plan.timeoutFor(req);
    if (routeMs !== undefined) {
      limitMs = routeMs === 0 ? Infinity : routeMs;
      source = 'timeoutFor';
    }
  }
  const callerMs = callerLimitMs(plan, req);
  if (callerMs < limitMs) {
    limitMs = callerMs;
    source = plan.headerSources[lastCallerHeader()];
  }
  if (plan.maxLimitMs < limitMs) {
    limitMs = plan.maxLimitMs;
    source = 'maxTimeoutMs';
  }
  lastSource = source;
  return limitMs;
}

/**
 * Where the deadline of the last {@link handlerLimitMs} came from: `'defaultTimeoutMs'` (or a
 * framework adapter's `timeoutMs`), `'timeoutFor'`, `'header:<name>'` or `'maxTimeoutMs'`.
 */
export function lastLimitSource(): string {
  return lastSource;
}

/** The caller's own deadline from the request's headers, in ms (Infinity: none sent). */
export function callerLimitMs(plan: DeadlinePlan, req: TimedRequest): number {
  return plan.deadlineHeaders.length === 0 ? Infinity : callerLimitFromRaw(req.rawHeaders, plan.deadlineHeaders);
}
