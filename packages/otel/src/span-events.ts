/**
 * The span event a timeout adds to the span that was active when its request started.
 *
 * A timeout gets an event only where the request it ended has a span we can name when it starts:
 *
 * - fetch: the caller's span (its own, or an HTTP instrumentation's parent), captured when
 *   `fetch()` is called;
 * - gRPC client: the caller's span (or the grpc instrumentation's client span, which is active
 *   when grpc-js calls the interceptors), captured when the call starts.
 *
 * And none where no span of the request exists when it starts, because the active span then
 * belongs to something else and an event there would be misattributed (the integration test
 * span-events.test.ts shows each): a gRPC server deadline (the call arrives in its connection's
 * context, e.g. a span around the server's start; a handler's span begins later, inside the
 * handler), a heartbeat kill (it fires in the wheel's callback; a connection has no span), and
 * Redis timer events (they happen in the worker's poll loop). Those are metrics only.
 */
import { trace, type Attributes, type Context } from '@opentelemetry/api';
import type { TimeoutBudget } from '@tickwheel/core';

/** The name of the span event a timeout adds. */
export const TIMEOUT_EVENT = 'tickwheel.timeout';

/**
 * Adds a `tickwheel.timeout` event to the span of the request a timeout ended, if it is
 * recording. That span is found in `requestContext`, the `Context` the bridge stored when the
 * request started (the adapters ask for it on `tickwheel:core:capture-context`): a timeout fires
 * in the wheel's callback, whose active context belongs to whatever armed the wheel's native
 * timer, not to the request. A request that started before the instrumentation was enabled has
 * no stored context and adds no event.
 *
 * @param requestContext - the message's `context`: a `Context`, or undefined
 * @param attributes - the timeout's metric attributes, repeated on the event
 * @param limitMs - the limit that fired
 * @param elapsedMs - time from the start to the timeout
 */
export function addTimeoutEvent(
  requestContext: unknown,
  attributes: Attributes,
  limitMs: number,
  elapsedMs: number,
  extra: Attributes | undefined,
): void {
  if (requestContext === undefined) return;
  const span = trace.getSpan(requestContext as Context);
  if (span === undefined || !span.isRecording()) return;
  span.addEvent(TIMEOUT_EVENT, {
    ...attributes,
    'tickwheel.limit_ms': limitMs,
    'tickwheel.elapsed_ms': elapsedMs,
    ...extra,
  });
}

/**
 * A timeout's {@link TimeoutBudget} as span event attributes: which limit, whether it was an
 * inherited deadline and from where, the whole budget, what was spent before and in the call, and
 * how late the timer ran (a large lateness blames the process, not the peer).
 */
export function budgetAttributes(budget: TimeoutBudget | undefined): Attributes | undefined {
  if (budget === undefined) return undefined;
  const attributes: Attributes = {
    'tickwheel.limit': budget.limit,
    'tickwheel.inherited': budget.inherited,
    'tickwheel.budget_ms': budget.budgetMs,
    'tickwheel.spent_before_ms': budget.spentBeforeMs,
    'tickwheel.late_ms': budget.lateMs,
  };
  if (budget.source !== undefined) attributes['tickwheel.source'] = budget.source;
  return attributes;
}
