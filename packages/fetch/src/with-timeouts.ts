/**
 * withTimeouts: the entry function that wraps a fetch with per-attempt, body-idle and total limits.
 * Must not depend on: another adapter, or patching fetch (fetch itself is only called).
 */
import { currentDeadline } from '@tickwheel/core';
import { requireFunction } from '@tickwheel/core/internal';
import { resolveOptions, type ResolvedOptions } from './options.js';
import { publishRetry } from './channels.js';
import { RequestTimer } from './request-timer.js';
import type { TimeoutError } from './timeout-error.js';
import {
  attemptInit,
  callerSignal,
  copyInit,
  isReplayable,
  isRequest,
  requestMethod,
  requestUrl,
  type InitLike,
} from './request-info.js';
import type { FetchLike, ResponseLike, TimedFetch, TimeoutOptions } from './types.js';

/** The wrapped function as the wrapper calls it. */
type RawFetch = (input: unknown, init?: InitLike) => Promise<ResponseLike>;

/**
 * Wraps a fetch function with phase timeouts on the tickwheel timing wheel: `headersMs` until
 * the response headers, `bodyIdleMs` while the body waits on the server, `totalMs` until the
 * body has fully arrived, and optional retries of idempotent requests that time out before
 * their headers arrive.
 *
 * Apart from its timeouts the result behaves exactly like `fetchFn`: the Response is fetch's
 * own, untouched. The wrapper gives fetch a signal of its own (aborted with the TimeoutError, or
 * with your signal's reason) and, for Node's fetch and `undici.fetch`, a dispatcher that
 * watches the body arrive on its way to the dispatcher fetch would have used.
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

function timedRequest(
  fetchFn: RawFetch,
  base: ResolvedOptions,
  input: unknown,
  init: InitLike | undefined,
): Promise<ResponseLike> {
  let options = base;
  if (init?.timeouts !== undefined) {
    try {
      options = resolveOptions(init.timeouts as TimeoutOptions, base, 'timeouts.');
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- resolveOptions throws TypeError/RangeError
      return Promise.reject(error);
    }
  }
  const deadline = currentDeadline();
  if (options.untimed && deadline === undefined) {
    // Nothing to time: fetch gets the caller's own arguments (without `timeouts`).
    return init != null && 'timeouts' in init ? fetchFn(input, copyInit(init)) : fetchFn(input, init);
  }
  const method = requestMethod(input, init);
  const timer = new RequestTimer(
    options,
    requestUrl(input),
    method,
    callerSignal(input, init),
    deadline,
    init?.dispatcher,
  );
  if (timer.abortedBeforeStart) {
    // fetch rejects with the caller's reason at once, as bare: hand out its very promise, so
    // that even the microtask it rejects in is the same.
    const pending = fetchFn(input, attemptInit(input, init, timer.beginAttempt(), timer.tap));
    pending.then(
      () => timer.finish(),
      () => timer.finish(),
    );
    return pending;
  }
  return attempts(fetchFn, options, timer, method, input, init);
}

async function attempts(
  fetchFn: RawFetch,
  options: ResolvedOptions,
  timer: RequestTimer,
  method: string,
  input: unknown,
  init: InitLike | undefined,
): Promise<ResponseLike> {
  const retry = options.retry !== undefined && options.retry.methods.has(method) && isReplayable(init);
  // A Request body can be sent once: the first attempt sends (and consumes) the caller's
  // Request as bare fetch would, retries send copies of a clone taken before it.
  const spare = retry && isRequest(input) && input.body != null ? input.clone() : undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      const signal = timer.beginAttempt();
      const attemptInput = attempt === 0 || spare === undefined ? input : spare.clone();
      let response: ResponseLike;
      try {
        response = await fetchFn(attemptInput, attemptInit(attemptInput, init, signal, timer.tap));
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
  } finally {
    // The clone tees the body: cancelling the spare branch frees what it buffered.
    (spare?.body as ReadableStream | null | undefined)?.cancel().catch(ignore);
  }
}

function ignore(): void {}
