/**
 * How long a request's handler deadline is: the route's or the default, shortened by the caller's header, capped.
 */
import { callerLimitFromRaw } from './deadline-headers.js';
import type { DeadlinePlan } from './options.js';
import type { TimedRequest } from './types.js';

/** The handler deadline `plan` gives `req`, in ms (Infinity: none). */
export function handlerLimitMs(plan: DeadlinePlan, req: TimedRequest): number {
  let limitMs = plan.limitMs;
  if (plan.timeoutFor !== undefined) {
    const routeMs = plan.timeoutFor(req);
    if (routeMs !== undefined) limitMs = routeMs === 0 ? Infinity : routeMs;
  }
  const callerMs = callerLimitMs(plan, req);
  if (callerMs < limitMs) limitMs = callerMs;
  return plan.maxLimitMs < limitMs ? plan.maxLimitMs : limitMs;
}

/** The caller's own deadline from the request's headers, in ms (Infinity: none sent). */
export function callerLimitMs(plan: DeadlinePlan, req: TimedRequest): number {
  return plan.deadlineHeaders.length === 0 ? Infinity : callerLimitFromRaw(req.rawHeaders, plan.deadlineHeaders);
}
