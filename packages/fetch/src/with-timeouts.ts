import { currentDeadline, requireFunction } from '@tickwheel/core';
import { resolveOptions, type ResolvedOptions } from './options.js';
import { publishRetry } from './channels.js';
import { RequestTimer } from './request-timer.js';
import type { TimeoutError } from './timeout-error.js';
import { callerSignal, isReplayable, isRequest, requestMethod, requestUrl, type InitLike } from './request-info.js';
import type { FetchLike, ResponseLike, TimedFetch, TimeoutOptions } from './types.js';

/** The wrapped function as the wrapper calls it. */
type RawFetch = (input: unknown, init?: InitLike) => Promise<ResponseLike>;

/**
 * Wraps a fetch function with phase timeouts on the tickwheel timing wheel: `headersMs` until
 * the response headers, `bodyIdleMs` between body chunks, `totalMs` until the body is fully read,
 * and optional retries of idempotent requests that time out before their headers arrive.
 *
 * Inside `withDeadline()` (or a handler wrapped by `@tickwheel/grpc`) a request never outlives the
 * ambient deadline, and one whose deadline has passed rejects without calling fetch. Every
 * option can be overridden per request with `init.timeouts`, which is removed before `fetchFn`
 * sees the init.
 *
 * @param fetchFn - `fetch`, `undici.fetch`, or any function with fetch's shape that honours `init.signal`
 * @param options - the limits; see {@link TimeoutOptions}. Without any, only ambient deadlines apply.
 * @returns a function with `fetchFn`'s own signature and types
 * @throws TypeError/RangeError at once for a bad option, naming it and the value
 * @example
 * ```ts
 * const timedFetch = withTimeouts(fetch, { headersMs: 2_000, bodyIdleMs: 5_000, totalMs: 30_000 });
 * const res = await timedFetch('http://127.0.0.1:8080/report', { timeouts: { totalMs: 60_000 } });
 * const report = await res.json(); // a stalled body rejects with a TimeoutError, phase 'body'
 * ```
 */
export function withTimeouts<F extends FetchLike>(fetchFn: F, options: TimeoutOptions = {}): TimedFetch<F> {
  requireFunction(fetchFn, 'fetchFn');
  const base = resolveOptions(options, undefined, '');
  const call = fetchFn as unknown as RawFetch;
  function timedFetch(input: unknown, init?: InitLike): Promise<ResponseLike> {
    return timedRequest(call, base, input, init);
  }
  return timedFetch as unknown as TimedFetch<F>;
}

async function timedRequest(fetchFn: RawFetch, base: ResolvedOptions, input: unknown, init: InitLike | undefined): Promise<ResponseLike> {
  let options = base;
  let fetchInit = init;
  if (init != null && 'timeouts' in init) {
    if (init.timeouts !== undefined) options = resolveOptions(init.timeouts as TimeoutOptions, base, 'timeouts.');
    fetchInit = { ...init };
    delete fetchInit.timeouts;
  }
  const deadline = currentDeadline();
  if (options.untimed && deadline === undefined) return fetchFn(input, fetchInit);

  const method = requestMethod(input, fetchInit);
  const timer = new RequestTimer(options, requestUrl(input), method, callerSignal(input, fetchInit), deadline);
  const retry = options.retry !== undefined && options.retry.methods.has(method) && isReplayable(fetchInit);
  const cloneInput = retry && isRequest(input) && input.body != null;
  try {
    for (let attempt = 0; ; attempt++) {
      const signal = timer.beginAttempt();
      let response: ResponseLike;
      try {
        response = await fetchFn(cloneInput ? (input as { clone(): unknown }).clone() : input, { ...fetchInit, signal });
      } catch (error) {
        const reason = timer.attemptFailed(error);
        const delay = retry ? timer.retryDelay(reason, attempt) : undefined;
        if (delay === undefined) throw reason;
        // retryDelay() only returns a delay for this attempt's own TimeoutError.
        publishRetry(reason as TimeoutError, attempt + 1, delay, timer.context);
        options.retry!.onRetry?.(reason as TimeoutError, attempt + 1);
        if (delay > 0) await timer.backoff(delay);
        continue;
      }
      return timer.responseArrived(response);
    }
  } catch (error) {
    timer.finish();
    throw error;
  }
}
