/**
 * withTimeouts: the entry function that wraps a fetch with connect, headers, body-idle and total limits, and retries.
 */
import { currentDeadline } from '@tickwheel/core';
import { requireFunction } from '@tickwheel/core/internal';
import { resolveOptions, type ResolvedOptions, type ResolvedRetry } from './options.js';
import { publishRetry } from './channels.js';
import { RequestTimer } from './request-timer.js';
import {
  attemptInit,
  callerSignal,
  copyInit,
  isReplayable,
  isRequest,
  requestDispatcher,
  requestMethod,
  requestUrl,
  setBudgetHeader,
  UNREADABLE,
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
    try {
      return timedRequest(call, base, input, init);
    } catch (error) {
      // Whatever the input, fetch answers with a promise: so does the wrapper.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the error as thrown, as fetch would reject
      return Promise.reject(error);
    }
  }
  // fetch's own name and arity (`fetch`, 1), which code and tests inspect.
  Object.defineProperty(timedFetch, 'name', { value: fetchFn.name });
  Object.defineProperty(timedFetch, 'length', { value: fetchFn.length });
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
  const signal = callerSignal(input, init);
  if ((options.untimed && deadline === undefined) || (signal !== undefined && !isSignal(signal))) {
    // Nothing to time, or a signal fetch refuses (it rejects with its own TypeError): fetch gets
    // the caller's own arguments (without `timeouts`).
    return init != null && 'timeouts' in init ? fetchFn(input, copyInit(init)) : fetchFn(input, init);
  }
  const dispatcher = init?.dispatcher ?? requestDispatcher(input);
  const unreadable = dispatcher === UNREADABLE;
  const timer = new RequestTimer(
    options,
    requestUrl(input),
    requestMethod(input, init),
    signal,
    deadline,
    unreadable ? undefined : dispatcher,
  );
  const header = options.deadlineHeader;
  const send = (attemptInput: unknown, attemptSignal: AbortSignal): Promise<ResponseLike> => {
    const tap = timer.tap!;
    const attempt = attemptInit(attemptInput, init, attemptSignal, unreadable ? undefined : tap);
    if (header !== undefined) {
      const limits = timer.limits;
      // The time this attempt may take, which the caller waits at most: its totalAt, bounded by the budget.
      if (limits.totalAt !== Infinity)
        setBudgetHeader(attempt, attemptInput, header, limits.totalAt - limits.attemptStartedAt);
    }
    if (!unreadable) return fetchFn(attemptInput, attempt);
    // fetch is to choose between the Request's own dispatcher and the global one, as bare.
    delete attempt.dispatcher;
    return tap.standInForGlobal(() => fetchFn(attemptInput, attempt));
  };
  if (timer.abortedBeforeStart) {
    // fetch rejects with the caller's reason at once, as bare: hand out its very promise, so
    // that even the microtask it rejects in is the same.
    const pending = send(input, timer.beginAttempt());
    pending.then(
      () => timer.finish(),
      () => timer.finish(),
    );
    return pending;
  }
  return attempts(send, options, timer, input, init);
}

/** An AbortSignal (of any realm): fetch refuses anything else as `init.signal`. */
function isSignal(signal: unknown): signal is AbortSignal {
  return (
    typeof signal === 'object' &&
    signal !== null &&
    typeof (signal as AbortSignal).aborted === 'boolean' &&
    typeof (signal as AbortSignal).addEventListener === 'function'
  );
}

async function attempts(
  send: (input: unknown, signal: AbortSignal) => Promise<ResponseLike>,
  options: ResolvedOptions,
  timer: RequestTimer,
  input: unknown,
  init: InitLike | undefined,
): Promise<ResponseLike> {
  const retry = options.retry !== undefined && isReplayable(init) ? options.retry : undefined;
  // A Request body can be sent once: the first attempt sends (and consumes) the caller's
  // Request as bare fetch would, retries send copies of a clone taken before it.
  const spare = retry !== undefined && isRequest(input) && input.body != null ? input.clone() : undefined;
  try {
    for (let attempt = 0; ; attempt++) {
      const signal = timer.beginAttempt();
      const attemptInput = attempt === 0 || spare === undefined ? input : spare.clone();
      let response: ResponseLike;
      try {
        response = await send(attemptInput, signal);
      } catch (error) {
        const reason = timer.attemptFailed(error);
        const delay = retry === undefined ? undefined : timer.retryAfterError(reason, attempt);
        if (delay === undefined) throw reason;
        announceRetry(retry!, timer, attempt + 1, delay, reason as Error, undefined);
        if (delay > 0) await timer.backoff(delay);
        continue;
      }
      const delay = retry === undefined ? undefined : timer.retryAfterResponse(response, attempt);
      if (delay === undefined) return timer.responseArrived(response);
      announceRetry(retry!, timer, attempt + 1, delay, undefined, response);
      // The retried response is not handed out: its body is cancelled, so the connection is freed.
      response.body?.cancel().catch(ignore);
      if (delay > 0) await timer.backoff(delay);
    }
  } catch (error) {
    timer.finish();
    throw error;
  } finally {
    // The clone tees the body: cancelling the spare branch frees what it buffered.
    (spare?.body as ReadableStream | null | undefined)?.cancel().catch(ignore);
  }
}

/** Tells the retry channel and `retry.onRetry` about a retry about to wait `delayMs`. */
function announceRetry(
  retry: ResolvedRetry,
  timer: RequestTimer,
  attempt: number,
  delayMs: number,
  error: Error | undefined,
  response: ResponseLike | undefined,
): void {
  publishRetry(timer, attempt, delayMs, error, response?.status, timer.context);
  retry.onRetry?.(error, attempt, response);
}

function ignore(): void {}
