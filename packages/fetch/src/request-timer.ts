/**
 * The per-request state across attempts: fetch's signal, the caller's and the deadline's aborts, how the body is watched, when to retry.
 */
import { captureContext, type Deadline } from '@tickwheel/core';
import { publishTimeout, timeoutChannel } from './channels.js';
import type { ResolvedOptions } from './options.js';
import { EventScanner, NOT_A_STREAM, streamKindOf } from './event-scanner.js';
import { BODY, CONNECT, DONE, HEADERS, RequestLimits, UPLOAD, type LimitsOwner } from './request-limits.js';
import { backoffDelay, isNetworkError, retryTimingDelay, retryTimingHeader } from './retry-policy.js';
import { follow, unfollow, type SignalFollower } from './signal-links.js';
import { relayResponse, type BodyObserver, type TimedBody } from './timed-body.js';
import type { TimeoutError } from './timeout-error.js';
import { LIFT_BODY, LIFT_HEADERS, TransportTap, type TransportObserver } from './transport-tap.js';
import type { ResponseLike } from './types.js';

/**
 * The timing of one request across its attempts: one AbortController per attempt (its signal is
 * the one fetch gets, aborted with the TimeoutError or the caller's reason), the request's
 * {@link RequestLimits} (ONE wheel handle for every limit), a {@link TransportTap} per attempt
 * that reports the connection and the body's progress on the wire, and a place in the shared
 * follower sets of the caller's signal and the ambient deadline's signal (see signal-links.ts),
 * all released by {@link RequestTimer.finish} (on completion, error, abort or cancellation). No
 * `AbortSignal.any`, whose composite signals outlive requests (Node #48419, #54614).
 *
 * fetch itself ends the response body when the signal aborts, with the signal's reason, so the
 * Response it returned is handed out untouched. Only a fetch that does not dispatch through the
 * tap gets its body timed the old way: a Response rebuilt around a timed relay of the body.
 */
export class RequestTimer implements LimitsOwner, BodyObserver, TransportObserver, SignalFollower {
  readonly limits: RequestLimits;
  private controller: AbortController | undefined;
  /** The dispatcher fetch is given for the current attempt. */
  tap: TransportTap | undefined;
  /** The relayed body when fetch did not dispatch through the tap. */
  private body: TimedBody | undefined;
  /** The scanner of the current attempt's response when it is an event stream and an event limit is set. */
  private scanner: EventScanner | undefined;
  /** The timeout that ended the current attempt. */
  private timedOut: TimeoutError | undefined;
  /** Set when the caller (or the deadline's parent) aborted; `abortReason` is then their reason. */
  private aborted = false;
  private abortReason: unknown;
  private callerSignal: AbortSignal | undefined;
  private deadline: Deadline | undefined;
  /** The dispatcher's own timeouts the wrapper's limits replace: LIFT_HEADERS and LIFT_BODY bits. */
  private readonly lift: number;
  /** A limit tells the upload of a request body from the wait for the answer: the tap reports it. */
  private readonly watchUpload: boolean;
  /** The caller's context for the timeout channel's subscribers (see core's channels.ts). */
  // The guard is read here, not only inside core's captureContext: a call into core per request
  // with nobody listening is measurable (benchmarks/README.md, "fetch: measurements behind the source comments").
  readonly context: unknown = timeoutChannel.hasSubscribers ? captureContext(timeoutChannel) : undefined;

  /**
   * @param dispatcher - the dispatcher fetch would use (`init.dispatcher` or a Request's own), which the tap sends requests through
   */
  constructor(
    options: ResolvedOptions,
    readonly url: string,
    readonly method: string,
    callerSignal: AbortSignal | undefined,
    deadline: Deadline | undefined,
    private readonly dispatcher?: unknown,
  ) {
    this.limits = new RequestLimits(options, this, deadline === undefined ? Infinity : deadline.remaining(), deadline);
    const bounded = options.totalMs !== Infinity || options.budgetMs !== Infinity || deadline !== undefined;
    this.lift =
      (bounded || options.headersMs !== Infinity ? LIFT_HEADERS : 0) |
      (bounded || options.bodyIdleMs !== Infinity ? LIFT_BODY : 0);
    this.watchUpload = options.headersMs !== Infinity || options.uploadIdleMs !== Infinity;
    if (callerSignal?.aborted) {
      this.abortedBy(callerSignal.reason);
      return;
    }
    if (callerSignal !== undefined) {
      this.callerSignal = callerSignal;
      follow(callerSignal, this, true);
    }
    if (deadline !== undefined) {
      if (deadline.signal.aborted) {
        this.deadlineAborted(deadline);
      } else {
        this.deadline = deadline;
        follow(deadline.signal, this, false);
      }
    }
  }

  /** The caller's signal (or the deadline's parent) was aborted when the request was made. */
  get abortedBeforeStart(): boolean {
    return this.aborted && this.controller === undefined && this.limits.phase === HEADERS;
  }

  /**
   * Starts an attempt: a fresh AbortController, a fresh {@link tap}, and the limits armed for
   * it. A caller's signal that is already aborted gives an aborted signal: fetch then rejects
   * with its reason exactly as bare fetch does (consuming a Request input).
   * @returns the signal to pass to fetch
   * @throws a TimeoutError when the budget is already spent, or the caller's reason when they
   *   aborted during a retry's backoff
   */
  beginAttempt(): AbortSignal {
    this.tap?.detach();
    this.tap = new TransportTap(
      this.dispatcher as ConstructorParameters<typeof TransportTap>[0],
      this,
      this.lift,
      this.watchUpload,
      this.limits.options.watchEvents,
    );
    this.scanner = undefined;
    if (this.aborted) {
      if (this.limits.phase !== HEADERS) throw this.abortReason;
      const aborted = new AbortController();
      aborted.abort(this.abortReason);
      return aborted.signal;
    }
    this.limits.startAttempt();
    this.timedOut = undefined;
    this.controller = new AbortController();
    return this.controller.signal;
  }

  /**
   * The attempt's fetch rejected with `error`.
   * @returns what the request should reject with: the attempt's TimeoutError, the caller's abort
   *   reason, or `error` itself (a network error)
   */
  attemptFailed(error: unknown): unknown {
    if (this.timedOut !== undefined) return this.timedOut;
    if (this.aborted) return this.abortReason;
    return error;
  }

  /**
   * How long to wait before retrying after `reason` (from {@link attemptFailed}) ended attempt
   * number `attempt` (from 0), or undefined when it must not be retried. Retried: this attempt's
   * own timeout before its headers (a connect timeout for any method, as nothing was sent), and a
   * network error with `retryOnNetworkError`; never a timeout of the budget, nor the caller's abort.
   */
  retryAfterError(reason: unknown, attempt: number): number | undefined {
    const retry = this.limits.options.retry;
    if (retry === undefined || attempt >= retry.limit || this.aborted) return undefined;
    const timedOut = this.timedOut;
    if (timedOut !== undefined) {
      if (reason !== timedOut || (timedOut.phase === 'total' && this.limits.totalIsTheBudget)) return undefined;
      if (timedOut.phase !== 'connect' && !retry.methods.has(this.method)) return undefined;
    } else if (!retry.retryOnNetworkError || !isNetworkError(reason) || !retry.methods.has(this.method)) {
      return undefined;
    }
    return this.limits.fitting(backoffDelay(retry, attempt));
  }

  /**
   * How long to wait before retrying after attempt number `attempt` answered with `response`, or
   * undefined when the response is the answer: a status not in `statusCodes`, a method not in
   * `methods`, no retries left, a `Retry-After` beyond `maxRetryAfter` or the budget, or a 413
   * without one (ky's rules).
   */
  retryAfterResponse(response: ResponseLike, attempt: number): number | undefined {
    const retry = this.limits.options.retry;
    if (retry === undefined || attempt >= retry.limit || this.timedOut !== undefined || this.aborted) return undefined;
    const status = response.status;
    if (!retry.statusCodes.has(status) || !retry.methods.has(this.method)) return undefined;
    const timing = response.headers === undefined ? undefined : retryTimingHeader(response.headers);
    if (timing !== undefined && retry.afterStatusCodes.has(status)) {
      const after = retryTimingDelay(timing, Date.now());
      if (after !== undefined) return after > retry.maxRetryAfter ? undefined : this.limits.fitting(after);
    }
    if (status === 413) return undefined;
    return this.limits.fitting(backoffDelay(retry, attempt));
  }

  /** Waits `delayMs` before the next attempt; rejects with the caller's reason if they abort meanwhile. */
  backoff(delayMs: number): Promise<void> {
    this.controller = undefined;
    return this.limits.backoff(delayMs);
  }

  /**
   * The attempt's response arrived: stop the headers limit, and time its body (when a limit or
   * a signal still applies to it) as it arrives, or release everything now.
   * @returns `response` itself; a rebuilt one only when fetch did not dispatch through the tap
   * @throws the attempt's TimeoutError when it fired first
   */
  responseArrived<R extends ResponseLike>(response: R): R {
    if (this.timedOut !== undefined || this.aborted) {
      const reason = this.timedOut ?? this.abortReason;
      response.body?.cancel(reason).catch(ignore);
      throw reason;
    }
    const limits = this.limits;
    const source = response.body;
    const tap = this.tap;
    if (limits.options.watchEvents && tap?.dispatched !== true) {
      // A relayed body is scanned as the consumer gets it, decoded: its content type says what it is.
      this.scanner = scannerFor(limits.options, response.headers?.get('content-type'), undefined);
    }
    const needsBody =
      limits.totalAt !== Infinity ||
      limits.options.bodyIdleMs !== Infinity ||
      this.scanner !== undefined ||
      this.callerSignal !== undefined ||
      this.deadline !== undefined;
    if (source === null || !needsBody || (tap?.dispatched === true && tap.ended)) {
      this.finish();
      return response;
    }
    const now = limits.wheel.clock.now();
    if (tap?.dispatched === true) {
      // fetch reads the body: the tap reports its progress, the signal ends it.
      limits.waiting = !tap.paused;
      limits.startBody(now, this.scanner !== undefined);
      return response;
    }
    const relayed = relayResponse(response, source, this);
    if (relayed === undefined) {
      // Not a fetch Response: its body cannot be timed, but totalMs still aborts the fetch.
      if (limits.totalAt === Infinity) this.finish();
      else limits.startBody(now, false);
      return response;
    }
    this.body = relayed.body;
    limits.startBody(now, this.scanner !== undefined);
    return relayed.response;
  }

  /** Releases the handle and every listener. Idempotent. */
  finish(): void {
    if (this.limits.phase === DONE) return;
    this.limits.finish();
    this.controller = undefined;
    this.body = undefined;
    this.tap = undefined;
    this.scanner = undefined;
    if (this.callerSignal !== undefined) {
      unfollow(this.callerSignal, this);
      this.callerSignal = undefined;
    }
    if (this.deadline !== undefined) {
      unfollow(this.deadline.signal, this);
      this.deadline = undefined;
    }
  }

  signalAborted(signal: AbortSignal): void {
    if (signal === this.callerSignal) this.abortedBy(signal.reason);
    else if (this.deadline !== undefined) this.deadlineAborted(this.deadline);
  }

  /** A relayed body's consumer waits for a chunk. */
  pullStarted(): void {
    this.limits.startWaiting();
  }

  chunkArrived(chunk: Uint8Array): void {
    this.limits.waiting = false;
    if (this.scanner !== undefined) this.scan(this.scanner, chunk);
  }

  transportConnected(): void {
    this.limits.connected();
  }

  transportHeaders(contentType: string | undefined, contentEncoding: string | undefined): void {
    this.scanner = scannerFor(this.limits.options, contentType, contentEncoding);
  }

  transportData(chunk: Uint8Array): void {
    if (this.scanner !== undefined) this.scan(this.scanner, chunk);
    // Each chunk restarts the idle limit: a lazy refresh of the handle, no relinking.
    const limits = this.limits;
    if (limits.phase === BODY && limits.waiting) limits.startWaiting();
  }

  transportPaused(): void {
    this.limits.waiting = false;
  }

  transportResumed(): void {
    if (this.limits.phase === BODY) this.limits.startWaiting();
  }

  transportEnded(): void {
    if (this.limits.phase === BODY) this.finish();
  }

  uploadPulled(): void {
    this.limits.uploadPulled();
  }

  uploadChunk(bytes: number): void {
    this.limits.uploadChunk(bytes);
  }

  uploadEnded(): void {
    this.limits.uploadEnded();
  }

  bodyDone(): void {
    this.finish();
  }

  bodyError(error: unknown): unknown {
    return this.attemptFailed(error);
  }

  connectObserved(): boolean {
    return this.tap?.dispatched === true;
  }

  /** A limit fired: abort the attempt with `error`, and error the body if it is being relayed. */
  limitFired(error: TimeoutError): void {
    const limits = this.limits;
    this.timedOut = error;
    publishTimeout(error, limits.wheel.clock.now() - limits.attemptStartedAt, limits.attempt, this.context);
    const body = this.body;
    const controller = this.controller;
    if (limits.phase === BODY) this.finish();
    body?.fail(error);
    controller?.abort(error);
  }

  /** Reads a body chunk for progress events; what a custom isProgress throws ends the attempt with it. */
  private scan(scanner: EventScanner, chunk: Uint8Array): void {
    let progress: boolean;
    try {
      progress = scanner.scan(chunk);
    } catch (error) {
      // As a caller's abort: the request or its body fails with the error, and nothing is published.
      this.scanner = undefined;
      this.abortedBy(error);
      return;
    }
    if (progress) this.limits.progress();
  }

  /** The deadline's signal aborts when it expires (a timeout of ours) or when its parent was cancelled. */
  private deadlineAborted(deadline: Deadline): void {
    const phase = this.limits.phase;
    if (deadline.remaining() > 0) {
      this.abortedBy(deadline.signal.reason);
    } else if (phase === CONNECT || phase === UPLOAD || phase === HEADERS || phase === BODY) {
      // The deadline's own timer fired: its lateness is the deadline's, on its wheel's clock.
      this.limitFired(this.limits.budgetError(deadline.wheel.clock.now() - deadline.expiresAt));
    }
  }

  /** The caller aborted: end the request with their reason, as plain fetch does. */
  private abortedBy(reason: unknown): void {
    const phase = this.limits.phase;
    if (phase === DONE || this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    const body = this.body;
    const controller = this.controller;
    if (phase !== HEADERS && phase !== CONNECT && phase !== UPLOAD) this.finish();
    body?.fail(reason);
    controller?.abort(reason);
    this.limits.cancelBackoff(reason);
  }
}

/**
 * The scanner of a response with `contentType`, when it is an event stream whose bytes are its
 * events (no content coding: a compressed body reaches the transport compressed).
 */
function scannerFor(
  options: ResolvedOptions,
  contentType: string | null | undefined,
  contentEncoding: string | undefined,
): EventScanner | undefined {
  const kind = streamKindOf(contentType);
  if (kind === NOT_A_STREAM) return undefined;
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') return undefined;
  return new EventScanner(kind, options.isProgress);
}

function ignore(): void {}
