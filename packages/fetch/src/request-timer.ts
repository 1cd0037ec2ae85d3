/**
 * The per-request state: one wheel timer through headers, body and retry backoff, and the abort it causes.
 * Must not depend on: another adapter or unresolved options (it reads options only as resolved by options.ts).
 */
import { captureContext, freshNow, type Deadline, type TimerHandle, type TimingWheel } from '@tickwheel/core';
import { publishTimeout, timeoutChannel } from './channels.js';
import type { ResolvedOptions } from './options.js';
import { follow, unfollow, type SignalFollower } from './signal-links.js';
import { relayResponse, type BodyObserver, type TimedBody } from './timed-body.js';
import { limitErrors, type TimeoutError } from './timeout-error.js';
import { TransportTap, type TransportObserver } from './transport-tap.js';
import type { ResponseLike } from './types.js';

/*
 * The phases of a request. The one timer handle of the request is re-pointed at each change
 * instead of allocating a timer per limit.
 */
/** Waiting for the response headers: the handle is armed for the earlier of headersAt and totalAt. */
const HEADERS = 0;
/** The response was handed out and its body is on its way: armed for totalAt, or idleAt while the body waits on the server. */
const BODY = 1;
/** Waiting before a retry: the handle is armed (and ref'ed) for the end of the backoff delay. */
const BACKOFF = 2;
/** Completed, failed or aborted: the handle is cancelled and every listener removed. */
const DONE = 3;

/**
 * The timing of one request across its attempts: one AbortController per attempt (its signal is
 * the one fetch gets, aborted with the TimeoutError or the caller's reason), ONE wheel handle
 * for the request, a {@link TransportTap} per attempt that reports the body's progress on the
 * wire, and a place in the shared follower sets of the caller's signal and the ambient
 * deadline's signal (see signal-links.ts), all released by {@link RequestTimer.finish} (on
 * completion, error, abort or cancellation). No `AbortSignal.any`, whose composite signals
 * outlive requests (Node #48419, #54614).
 *
 * fetch itself ends the response body when the signal aborts, with the signal's reason, so the
 * Response it returned is handed out untouched. Only a fetch that does not dispatch through the
 * tap gets its body timed the old way: a Response rebuilt around a timed relay of the body.
 */
export class RequestTimer implements BodyObserver, TransportObserver, SignalFollower {
  private readonly wheel: TimingWheel;
  private handle: TimerHandle | undefined;
  private controller: AbortController | undefined;
  /** The dispatcher fetch is given for the current attempt. */
  tap: TransportTap | undefined;
  /** The relayed body when fetch did not dispatch through the tap. */
  private body: TimedBody | undefined;
  private phase = HEADERS;
  /** When the whole request must be done (retry budget or ambient deadline); Infinity when unbounded. */
  private readonly budgetAt: number;
  /** The ambient deadline's remaining ms when it sets budgetAt; undefined when the retry budget does. */
  private readonly deadlineLeft: number | undefined;
  /** When the current attempt must be done: the earlier of its totalMs and budgetAt. */
  private totalAt = Infinity;
  private totalIsBudget = false;
  private headersAt = Infinity;
  private idleAt = Infinity;
  /**
   * True while the body waits on the server: fetch is ready for more data (not paused by a
   * full buffer), or, for a relayed body, the consumer's read is pending. Only then does
   * bodyIdleMs run.
   */
  private waiting = false;
  /** The timeout that ended the current attempt. */
  private timedOut: TimeoutError | undefined;
  /** Set when the caller (or the deadline's parent) aborted; `abortReason` is then their reason. */
  private aborted = false;
  private abortReason: unknown;
  private backoffSettle: { resolve: () => void; reject: (reason: unknown) => void } | undefined;
  private callerSignal: AbortSignal | undefined;
  private deadline: Deadline | undefined;
  /** The attempt under way, from 0, and when it began (wheel clock): for the timeout channel. */
  private attempt = -1;
  private attemptStartedAt = 0;
  /** The caller's context for the timeout channel's subscribers (see core's channels.ts). */
  readonly context: unknown = captureContext(timeoutChannel);

  /**
   * @param dispatcher - the caller's `init.dispatcher`, which the tap sends requests through
   */
  constructor(
    private readonly options: ResolvedOptions,
    readonly url: string,
    readonly method: string,
    callerSignal: AbortSignal | undefined,
    deadline: Deadline | undefined,
    private readonly dispatcher?: unknown,
  ) {
    this.wheel = options.wheel;
    // A request costs far more than a clock read: start from a fresh one, not the job's.
    const now = freshNow(this.wheel.clock);
    const retryBudgetAt = now + options.budgetMs;
    const deadlineLeft = deadline === undefined ? Infinity : deadline.remaining();
    if (now + deadlineLeft < retryBudgetAt) {
      this.budgetAt = now + deadlineLeft;
      this.deadlineLeft = deadlineLeft;
    } else {
      this.budgetAt = retryBudgetAt;
    }
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
    const now = this.wheel.clock.now();
    if (now >= this.budgetAt) throw this.budgetError();
    this.phase = HEADERS;
    this.timedOut = undefined;
    this.attempt++;
    this.attemptStartedAt = now;
    const attemptTotalAt = now + this.options.totalMs;
    this.totalIsBudget = this.budgetAt < attemptTotalAt;
    this.totalAt = this.totalIsBudget ? this.budgetAt : attemptTotalAt;
    this.headersAt = now + this.options.headersMs;
    this.controller = new AbortController();
    this.arm(this.headersAt < this.totalAt ? this.headersAt : this.totalAt, now);
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
   * undefined when it must not be retried: not this attempt's own timeout, no retries left, a
   * method that is not retried, or a budget that the backoff would spend.
   */
  retryDelay(error: unknown, attempt: number): number | undefined {
    const retry = this.options.retry;
    const timedOut = this.timedOut;
    if (retry === undefined || timedOut === undefined || error !== timedOut) return undefined;
    if (this.totalIsBudget && timedOut.phase === 'total') return undefined;
    if (attempt >= retry.limit || !retry.methods.has(this.method)) return undefined;
    const delay = retry.backoffMs * retry.backoffFactor ** attempt;
    return this.wheel.clock.now() + delay < this.budgetAt ? delay : undefined;
  }

  /** Waits `delayMs` on the request's handle (ref'ed meanwhile); rejects if the caller aborts. */
  backoff(delayMs: number): Promise<void> {
    this.phase = BACKOFF;
    this.controller = undefined;
    return new Promise<void>((resolve, reject) => {
      this.backoffSettle = { resolve, reject };
      this.arm(this.wheel.clock.now() + delayMs, this.wheel.clock.now());
      this.handle?.ref();
    });
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
    this.phase = BODY;
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
      this.idleAt = now + this.options.bodyIdleMs;
      this.arm(this.waiting && this.idleAt < this.totalAt ? this.idleAt : this.totalAt, now);
      return response;
    }
    const relayed = relayResponse(response, source, this);
    if (relayed === undefined) {
      // Not a fetch Response: its body cannot be timed, but totalMs still aborts the fetch.
      if (this.totalAt === Infinity) this.finish();
      else this.arm(this.totalAt, now);
      return response;
    }
    this.body = relayed.body;
    this.arm(this.totalAt, now);
    return relayed.response;
  }

  /** Releases the handle and every listener. Idempotent. */
  finish(): void {
    if (this.phase === DONE) return;
    this.phase = DONE;
    this.handle?.cancel();
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

  /** The body waits on the server from now: bodyIdleMs runs. */
  private startWaiting(): void {
    this.waiting = true;
    const idleMs = this.options.bodyIdleMs;
    if (idleMs === Infinity) return;
    const now = this.wheel.clock.now();
    this.idleAt = now + idleMs;
    // Usually later than the armed expiry: the wheel then only rewrites it (lazy re-filing).
    this.arm(this.idleAt < this.totalAt ? this.idleAt : this.totalAt, now);
  }

  /** Points the handle at `at` (wheel clock ms), or cancels it when `at` is Infinity. */
  private arm(at: number, now: number): void {
    if (at === Infinity) {
      this.handle?.cancel();
      return;
    }
    const delay = at > now ? at - now : 0;
    if (this.handle === undefined) {
      // Timeouts never hold the process open on their own: the socket does while it matters.
      this.handle = this.wheel.schedule(delay, () => this.onTimer()).unref();
    } else {
      this.handle.refresh(delay);
    }
  }

  private onTimer(): void {
    const now = this.wheel.clock.now();
    switch (this.phase) {
      case HEADERS:
        if (this.headersAt <= this.totalAt) {
          this.expire(limitErrors.headers(this, this.options.headersMs));
        } else {
          this.expire(this.totalError());
        }
        return;
      case BODY:
        if (now >= this.totalAt) {
          this.expire(this.totalError());
        } else if (this.waiting && now >= this.idleAt) {
          this.expire(limitErrors.body(this, this.options.bodyIdleMs));
        } else {
          // The idle limit passed while the consumer, not the server, was busy: only total remains.
          this.arm(this.waiting && this.idleAt < this.totalAt ? this.idleAt : this.totalAt, now);
        }
        return;
      case BACKOFF: {
        this.handle!.unref();
        const settle = this.backoffSettle!;
        this.backoffSettle = undefined;
        settle.resolve();
        return;
      }
    }
  }

  /** The error for the budget: the ambient deadline's or the retry budget's. */
  private budgetError(): TimeoutError {
    return limitErrors.budget(this, this.options.budgetMs, this.deadlineLeft);
  }

  private totalError(): TimeoutError {
    return this.totalIsBudget ? this.budgetError() : limitErrors.total(this, this.options.totalMs);
  }

  /** A limit fired: abort the attempt with `error`, and error the body if it is being relayed. */
  private expire(error: TimeoutError): void {
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
    const backoff = this.backoffSettle;
    if (this.phase !== HEADERS) this.finish();
    body?.fail(reason);
    controller?.abort(reason);
    backoff?.reject(reason);
  }
}

function ignore(): void {}
