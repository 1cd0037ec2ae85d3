/**
 * TimeoutError: the DOMException-shaped error a timed-out request rejects with.
 */

/** Which limit a {@link TimeoutError} reports. */
export type TimeoutPhase = 'connect' | 'upload' | 'headers' | 'body' | 'first-event' | 'event-idle' | 'total';

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

  constructor(message: string, phase: TimeoutPhase, timeoutMs: number, url: string, method: string) {
    super(message, 'TimeoutError');
    this.phase = phase;
    this.timeoutMs = timeoutMs;
    this.url = url;
    this.method = method;
    // Start the stack at the caller rather than inside DOMException's constructor.
    Error.captureStackTrace?.(this, TimeoutError);
  }
}

/** Which request a {@link TimeoutError} is about. */
export interface RequestRef {
  readonly url: string;
  readonly method: string;
}

function timeoutError(request: RequestRef, phase: TimeoutPhase, timeoutMs: number, what: string): TimeoutError {
  return new TimeoutError(`${request.method} ${request.url}: ${what}`, phase, timeoutMs, request.url, request.method);
}

/** The error of each limit, its message naming the option that set it. */
export const limitErrors = {
  connect: (request: RequestRef, connectMs: number): TimeoutError =>
    timeoutError(request, 'connect', connectMs, `no connection to send on within ${connectMs} ms (connectMs)`),
  upload: (request: RequestRef, uploadIdleMs: number): TimeoutError =>
    timeoutError(
      request,
      'upload',
      uploadIdleMs,
      `the request body's upload stalled for ${uploadIdleMs} ms (uploadIdleMs)`,
    ),
  headers: (request: RequestRef, headersMs: number): TimeoutError =>
    timeoutError(request, 'headers', headersMs, `no response headers within ${headersMs} ms (headersMs)`),
  body: (request: RequestRef, bodyIdleMs: number): TimeoutError =>
    timeoutError(request, 'body', bodyIdleMs, `no body data for ${bodyIdleMs} ms (bodyIdleMs)`),
  firstEvent: (request: RequestRef, firstEventMs: number): TimeoutError =>
    timeoutError(
      request,
      'first-event',
      firstEventMs,
      `no progress event within ${firstEventMs} ms of the response headers (firstEventMs)`,
    ),
  eventIdle: (request: RequestRef, eventIdleMs: number): TimeoutError =>
    timeoutError(request, 'event-idle', eventIdleMs, `no progress event for ${eventIdleMs} ms (eventIdleMs)`),
  total: (request: RequestRef, totalMs: number): TimeoutError =>
    timeoutError(request, 'total', totalMs, `not complete within ${totalMs} ms (totalMs)`),
  /** The retry budget's, or the ambient deadline's when `deadlineLeft` (its ms left at the start) is given. */
  budget: (request: RequestRef, budgetMs: number, deadlineLeft: number | undefined): TimeoutError => {
    if (deadlineLeft === undefined)
      return timeoutError(
        request,
        'total',
        budgetMs,
        `not complete within the retry budget of ${budgetMs} ms (retry.budgetMs)`,
      );
    return deadlineLeft === 0
      ? timeoutError(request, 'total', 0, 'the ambient deadline had already passed; fetch was not called')
      : timeoutError(
          request,
          'total',
          deadlineLeft,
          `not complete within the ${Math.round(deadlineLeft)} ms left of the ambient deadline`,
        );
  },
  /** Less than minBudgetMs (or nothing) left of the ambient deadline after reserveMs, when an attempt would start. */
  minBudget: (request: RequestRef, leftMs: number, reserveMs: number, minBudgetMs: number): TimeoutError =>
    timeoutError(
      request,
      'total',
      leftMs,
      `${Math.round(leftMs)} ms left of the ambient deadline, below minBudgetMs ${minBudgetMs} after reserveMs ${reserveMs}; fetch was not called`,
    ),
};
