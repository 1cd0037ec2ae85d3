/**
 * TimeoutError: the DOMException-shaped error a timed-out request rejects with.
 */
import { describeBudget, type TimeoutBudget } from '@tickwheel/core';

/** Which limit a {@link TimeoutError} reports. */
export type TimeoutPhase = 'connect' | 'upload' | 'headers' | 'body' | 'first-event' | 'event-idle' | 'total';

/**
 * The time per phase of the attempt that timed out, in ms; a phase it did not reach is 0.
 * `connect` is measured only with `connectMs` (otherwise it counts to `headers`).
 */
export interface FetchPhaseTimes {
  readonly connect: number;
  readonly upload: number;
  readonly headers: number;
  readonly body: number;
}

/**
 * Where a timed-out request's time went: core's {@link TimeoutBudget} (`limit` is the option that
 * fired, such as `'headersMs'`, `'retry.budgetMs'`, `'minBudgetMs'`, or `'deadline'`), plus the
 * attempts and backoff waits before the timeout and the phases of the attempt it ended.
 */
export interface FetchTimeoutBudget extends TimeoutBudget {
  /** The attempt that timed out, from 1 (0 when the budget was gone before the first). */
  readonly attempts: number;
  /** The backoff waits before it, in ms, one per retry. */
  readonly backoffMs: readonly number[];
  /** The time per phase of the attempt that timed out. */
  readonly phasesMs: FetchPhaseTimes;
}

/**
 * The error a timed-out request rejects with, and the error its response body stream errors with
 * when the timeout strikes while the body is read.
 *
 * It is a `DOMException` named `'TimeoutError'` (code 23, `TIMEOUT_ERR`), exactly like the reason
 * `AbortSignal.timeout()` aborts with, so code written for that keeps working:
 * `err.name === 'TimeoutError'`, `err instanceof DOMException` and `err instanceof Error` all hold.
 * On top it says which limit fired and for which request.
 *
 * @example
 * ```ts
 * try {
 *   await timedFetch(url);
 * } catch (err) {
 *   if (err instanceof TimeoutError) console.warn(`${err.method} ${err.url}: ${err.phase} after ${err.timeoutMs} ms`);
 * }
 * ```
 */
export class TimeoutError extends DOMException {
  /**
   * Which limit fired: `'connect'` (connectMs), `'upload'` (uploadIdleMs), `'headers'` (headersMs), `'body'` (bodyIdleMs),
   * `'first-event'` (firstEventMs), `'event-idle'` (eventIdleMs) or `'total'` (totalMs, the retry budget or the ambient deadline, including its minBudgetMs).
   */
  readonly phase: TimeoutPhase;
  /** The limit that was exceeded, in ms. */
  readonly timeoutMs: number;
  /** The request URL. */
  readonly url: string;
  /** The request method, upper case. */
  readonly method: string;
  /**
   * Where the request's time went: which limit, whose budget (an ambient deadline's source and
   * what was gone before the request), the request's own time, how late the timer ran, the
   * attempts and backoffs, and the phases of the last attempt. Set on every error the package raises.
   */
  readonly budget: FetchTimeoutBudget | undefined;

  constructor(
    message: string,
    phase: TimeoutPhase,
    timeoutMs: number,
    url: string,
    method: string,
    budget?: FetchTimeoutBudget,
  ) {
    super(message, 'TimeoutError');
    this.phase = phase;
    this.timeoutMs = timeoutMs;
    this.url = url;
    this.method = method;
    this.budget = budget;
    // Start the stack at the caller rather than inside DOMException's constructor.
    Error.captureStackTrace?.(this, TimeoutError);
  }
}

/** Which request a {@link TimeoutError} is about. */
export interface RequestRef {
  readonly url: string;
  readonly method: string;
}

function timeoutError(
  request: RequestRef,
  phase: TimeoutPhase,
  timeoutMs: number,
  what: string,
  budget: FetchTimeoutBudget,
): TimeoutError {
  const retries = budget.backoffMs.length;
  const attempts =
    retries === 0 ? '' : ` (attempt ${budget.attempts}, after backoffs of ${budget.backoffMs.join(', ')} ms)`;
  return new TimeoutError(
    `${request.method} ${request.url}: ${what}${attempts}; ${describeBudget(budget)}`,
    phase,
    timeoutMs,
    request.url,
    request.method,
    budget,
  );
}

/** The error of each limit, its message naming the option that set it and where the time went. */
export const limitErrors = {
  connect: (request: RequestRef, connectMs: number, budget: FetchTimeoutBudget): TimeoutError =>
    timeoutError(request, 'connect', connectMs, `no connection to send on within ${connectMs} ms (connectMs)`, budget),
  upload: (request: RequestRef, uploadIdleMs: number, budget: FetchTimeoutBudget): TimeoutError =>
    timeoutError(
      request,
      'upload',
      uploadIdleMs,
      `the request body's upload stalled for ${uploadIdleMs} ms (uploadIdleMs)`,
      budget,
    ),
  headers: (request: RequestRef, headersMs: number, budget: FetchTimeoutBudget): TimeoutError =>
    timeoutError(request, 'headers', headersMs, `no response headers within ${headersMs} ms (headersMs)`, budget),
  body: (request: RequestRef, bodyIdleMs: number, budget: FetchTimeoutBudget): TimeoutError =>
    timeoutError(request, 'body', bodyIdleMs, `no body data for ${bodyIdleMs} ms (bodyIdleMs)`, budget),
  firstEvent: (request: RequestRef, firstEventMs: number, budget: FetchTimeoutBudget): TimeoutError =>
    timeoutError(
      request,
      'first-event',
      firstEventMs,
      `no progress event within ${firstEventMs} ms of the response headers (firstEventMs)`,
      budget,
    ),
  eventIdle: (request: RequestRef, eventIdleMs: number, budget: FetchTimeoutBudget): TimeoutError =>
    timeoutError(request, 'event-idle', eventIdleMs, `no progress event for ${eventIdleMs} ms (eventIdleMs)`, budget),
  total: (request: RequestRef, totalMs: number, budget: FetchTimeoutBudget): TimeoutError =>
    timeoutError(request, 'total', totalMs, `not complete within ${totalMs} ms (totalMs)`, budget),
  /** The retry budget's, or the ambient deadline's when `deadlineLeft` (its ms left at the start) is given. */
  budget: (
    request: RequestRef,
    budgetMs: number,
    deadlineLeft: number | undefined,
    budget: FetchTimeoutBudget,
  ): TimeoutError => {
    if (deadlineLeft === undefined)
      return timeoutError(
        request,
        'total',
        budgetMs,
        `not complete within the retry budget of ${budgetMs} ms (retry.budgetMs)`,
        budget,
      );
    return deadlineLeft === 0
      ? timeoutError(request, 'total', 0, 'the ambient deadline had already passed; fetch was not called', budget)
      : timeoutError(
          request,
          'total',
          deadlineLeft,
          `not complete within the ${Math.round(deadlineLeft)} ms left of the ambient deadline`,
          budget,
        );
  },
  /** Less than minBudgetMs (or nothing) left of the ambient deadline after reserveMs, when an attempt would start. */
  minBudget: (
    request: RequestRef,
    leftMs: number,
    reserveMs: number,
    minBudgetMs: number,
    budget: FetchTimeoutBudget,
  ): TimeoutError =>
    timeoutError(
      request,
      'total',
      leftMs,
      `${Math.round(leftMs)} ms left of the ambient deadline, below minBudgetMs ${minBudgetMs} after reserveMs ${reserveMs}; fetch was not called`,
      budget,
    ),
};
