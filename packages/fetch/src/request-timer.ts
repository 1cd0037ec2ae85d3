/**
 * The per-request state across attempts: fetch's signal, the caller's and the deadline's aborts, how the body is watched.
 * Must not depend on: another adapter or unresolved options (it reads options only as resolved by options.ts).
 */
import { captureContext, type Deadline } from '@tickwheel/core';
import { publishTimeout, timeoutChannel } from './channels.js';
import type { ResolvedOptions } from './options.js';
import { BODY, DONE, HEADERS, RequestLimits } from './request-limits.js';
import { follow, unfollow, type SignalFollower } from './signal-links.js';
import { relayResponse, type BodyObserver, type TimedBody } from './timed-body.js';
import type { TimeoutError } from './timeout-error.js';
import { TransportTap, type TransportObserver } from './transport-tap.js';
import type { ResponseLike } from './types.js';

/**
 * The timing of one request across its attempts: one AbortController per attempt (its signal is
 * the one fetch gets, aborted with the TimeoutError or the caller's reason), ONE wheel handle
 * for the request (its limits: see {@link RequestLimits}), a {@link TransportTap} per attempt that reports the body's progress on the
 * wire, and a place in the shared follower sets of the caller's signal and the ambient
 * deadline's signal (see signal-links.ts), all released by {@link RequestTimer.finish} (on
 * completion, error, abort or cancellation). No `AbortSignal.any`, whose composite signals
 * outlive requests (Node #48419, #54614).
 *
 * fetch itself ends the response body when the signal aborts, with the signal's reason, so the
 * Response it returned is handed out untouched. Only a fetch that does not dispatch through the
 * tap gets its body timed the old way: a Response rebuilt around a timed relay of the body.
 */
export class RequestTimer extends RequestLimits implements BodyObserver, TransportObserver, SignalFollower {
  private controller: AbortController | undefined;
  /** The dispatcher fetch is given for the current attempt. */
  tap: TransportTap | undefined;
  /** The relayed body when fetch did not dispatch through the tap. */
  private body: TimedBody | undefined;
  /** The timeout that ended the current attempt. */
  private timedOut: TimeoutError | undefined;
  /** Set when the caller (or the deadline's parent) aborted; `abortReason` is then their reason. */
  private aborted = false;
  private abortReason: unknown;
  private callerSignal: AbortSignal | undefined;
  private deadline: Deadline | undefined;
  /** The caller's context for the timeout channel's subscribers (see core's channels.ts). */
  // The guard is read here, not only inside core's captureContext: the call into core cost
  // Node 22 +1.5 % instructions per request with nobody listening (benchmarks/lib/channel-overhead.mjs).
  readonly context: unknown = timeoutChannel.hasSubscribers ? captureContext(timeoutChannel) : undefined;

  /**
   * @param dispatcher - the caller's `init.dispatcher`, which the tap sends requests through
   */
  constructor(
    options: ResolvedOptions,
    url: string,
    method: string,
    callerSignal: AbortSignal | undefined,
    deadline: Deadline | undefined,
    private readonly dispatcher?: unknown,
  ) {
    super(options, url, method, deadline === undefined ? Infinity : deadline.remaining());
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
    return this.aborted && this.controller === undefined && this.phase === HEADERS;
  }

  /**
   * Starts an attempt: a fresh AbortController, a fresh {@link tap}, and the handle armed for
   * its first limit. A caller's signal that is already aborted gives an aborted signal: fetch
   * then rejects with its reason exactly as bare fetch does (consuming a Request input).
   * @returns the signal to pass to fetch
   * @throws a TimeoutError when the budget is already spent, or the caller's reason when they
   *   aborted during a retry's backoff
   */
  beginAttempt(): AbortSignal {
    this.tap = new TransportTap(this.dispatcher as ConstructorParameters<typeof TransportTap>[0], this);
    if (this.aborted) {
      if (this.phase !== HEADERS) throw this.abortReason;
      const aborted = new AbortController();
      aborted.abort(this.abortReason);
      return aborted.signal;
    }
    this.startAttempt();
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
   * How long to wait before retrying after `error` ended attempt number `attempt` (from 0), or
   * undefined when it must not be retried: not this attempt's own timeout, or see
   * {@link RequestLimits.backoffDelay}.
   */
  retryDelay(error: unknown, attempt: number): number | undefined {
    const timedOut = this.timedOut;
    if (timedOut === undefined || error !== timedOut) return undefined;
    return this.backoffDelay(timedOut, attempt);
  }

  override backoff(delayMs: number): Promise<void> {
    this.controller = undefined;
    return super.backoff(delayMs);
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
    const source = response.body;
    const needsBody =
      this.totalAt !== Infinity ||
      this.options.bodyIdleMs !== Infinity ||
      this.callerSignal !== undefined ||
      this.deadline !== undefined;
    const tap = this.tap;
    if (source === null || !needsBody || (tap?.dispatched === true && tap.ended)) {
      this.finish();
      return response;
    }
    const now = this.wheel.clock.now();
    if (tap?.dispatched === true) {
      // fetch reads the body: the tap reports its progress, the signal ends it.
      this.waiting = !tap.paused;
      this.startBody(now);
      return response;
    }
    const relayed = relayResponse(response, source, this);
    if (relayed === undefined) {
      // Not a fetch Response: its body cannot be timed, but totalMs still aborts the fetch.
      if (this.totalAt === Infinity) this.finish();
      else this.startBody(now);
      return response;
    }
    this.body = relayed.body;
    this.startBody(now);
    return relayed.response;
  }

  /** Releases the handle and every listener. Idempotent. */
  finish(): void {
    if (this.phase === DONE) return;
    this.phase = DONE;
    this.disarm();
    this.controller = undefined;
    this.body = undefined;
    this.tap = undefined;
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
    this.startWaiting();
  }

  chunkArrived(): void {
    this.waiting = false;
  }

  transportData(): void {
    // Each chunk restarts the idle limit: a lazy refresh of the handle, no relinking.
    if (this.phase === BODY && this.waiting) this.startWaiting();
  }

  transportPaused(): void {
    this.waiting = false;
  }

  transportResumed(): void {
    if (this.phase === BODY) this.startWaiting();
  }

  transportEnded(): void {
    if (this.phase === BODY) this.finish();
  }

  bodyDone(): void {
    this.finish();
  }

  bodyError(error: unknown): unknown {
    return this.attemptFailed(error);
  }

  /** A limit fired: abort the attempt with `error`, and error the body if it is being relayed. */
  protected expire(error: TimeoutError): void {
    this.timedOut = error;
    publishTimeout(error, this.wheel.clock.now() - this.attemptStartedAt, this.attempt, this.context);
    const body = this.body;
    const controller = this.controller;
    if (this.phase === BODY) this.finish();
    body?.fail(error);
    controller?.abort(error);
  }

  /** The deadline's signal aborts when it expires (a timeout of ours) or when its parent was cancelled. */
  private deadlineAborted(deadline: Deadline): void {
    if (deadline.remaining() > 0) {
      this.abortedBy(deadline.signal.reason);
    } else if (this.phase === HEADERS || this.phase === BODY) {
      this.expire(this.budgetError());
    }
  }

  /** The caller aborted: end the request with their reason, as plain fetch does. */
  private abortedBy(reason: unknown): void {
    if (this.phase === DONE || this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    const body = this.body;
    const controller = this.controller;
    if (this.phase !== HEADERS) this.finish();
    body?.fail(reason);
    controller?.abort(reason);
    this.cancelBackoff(reason);
  }
}

function ignore(): void {}
