import { captureContext, type Deadline, type RunInContext, type TimerHandle, type TimingWheel } from '@tickwheel/core';
import { publishTimeout, timeoutChannel } from './channels.js';
import type { ResolvedOptions } from './options.js';
import type { BodyObserver } from './timed-body.js';
import { timeResponseBody, type TimedResponseBody } from './timed-response.js';
import { TimeoutError } from './timeout-error.js';
import type { ResponseLike } from './types.js';

/*
 * The phases of a request. The one timer handle of the request is re-pointed at each change
 * instead of allocating a timer per limit.
 */
/** Waiting for the response headers: the handle is armed for the earlier of headersAt and totalAt. */
const HEADERS = 0;
/** The response was handed out and its body is relayed: armed for totalAt, or idleAt while a read waits. */
const BODY = 1;
/** Waiting before a retry: the handle is armed (and ref'ed) for the end of the backoff delay. */
const BACKOFF = 2;
/** Completed, failed or aborted: the handle is cancelled and every listener removed. */
const DONE = 3;

/**
 * The timing of one request across its attempts: one AbortController per attempt, ONE wheel
 * handle for the request, and manually linked listeners on the caller's signal and the ambient
 * deadline's signal, all released by {@link RequestTimer.finish} (on completion, error, abort or
 * cancellation). No `AbortSignal.any`, whose composite signals outlive requests (Node #48419, #54614).
 */
export class RequestTimer implements BodyObserver {
  private readonly wheel: TimingWheel;
  private handle: TimerHandle | undefined;
  private controller: AbortController | undefined;
  private body: TimedResponseBody | undefined;
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
  /** True while the consumer waits for a body chunk; only then does bodyIdleMs run. */
  private pulling = false;
  /** The timeout that ended the current attempt. */
  private timedOut: TimeoutError | undefined;
  /** Set when the caller (or the deadline's parent) aborted; `abortReason` is then their reason. */
  private aborted = false;
  private abortReason: unknown;
  private backoffSettle: { resolve: () => void; reject: (reason: unknown) => void } | undefined;
  private callerSignal: AbortSignal | undefined;
  private onCallerAbort: (() => void) | undefined;
  private deadline: Deadline | undefined;
  private onDeadlineAbort: (() => void) | undefined;
  /** The attempt under way, from 0, and when it began (wheel clock): for the timeout channel. */
  private attempt = -1;
  private attemptStartedAt = 0;
  /** The caller's async context, kept only while someone listens to the timeout channel. */
  readonly context: RunInContext | undefined = captureContext(timeoutChannel);

  constructor(
    private readonly options: ResolvedOptions,
    readonly url: string,
    readonly method: string,
    callerSignal: AbortSignal | undefined,
    deadline: Deadline | undefined,
  ) {
    this.wheel = options.wheel;
    const now = this.wheel.clock.now();
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
    // Listeners are closures made only when there is something to listen to: most requests
    // have neither a signal nor a deadline, and then cost no closure at all.
    if (callerSignal !== undefined) {
      this.callerSignal = callerSignal;
      this.onCallerAbort = () => this.abortedBy(callerSignal.reason);
      callerSignal.addEventListener('abort', this.onCallerAbort);
    }
    if (deadline !== undefined) {
      this.deadline = deadline;
      this.onDeadlineAbort = () => this.deadlineAborted(deadline);
      if (deadline.signal.aborted) this.deadlineAborted(deadline);
      else deadline.signal.addEventListener('abort', this.onDeadlineAbort);
    }
  }

  /**
   * Starts an attempt: a fresh AbortController and the handle armed for its first limit.
   * @returns the signal to pass to fetch
   * @throws the caller's abort reason, or a TimeoutError when the budget is already spent
   */
  beginAttempt(): AbortSignal {
    if (this.aborted) throw this.abortReason;
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
   * The attempt's response arrived: stop the headers limit, and hand out a response whose body
   * is timed (when a limit or a signal still applies to it), or release everything now.
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
    const needsBody = this.totalAt !== Infinity || this.options.bodyIdleMs !== Infinity || this.callerSignal !== undefined || this.deadline !== undefined;
    if (source === null || !needsBody) {
      this.finish();
      return response;
    }
    const body = timeResponseBody(response, this);
    if (body === undefined) {
      // Not a fetch Response: its body cannot be timed, but totalMs still aborts the fetch.
      if (this.totalAt === Infinity) this.finish();
      else this.arm(this.totalAt, this.wheel.clock.now());
      return response;
    }
    this.body = body;
    this.arm(this.totalAt, this.wheel.clock.now());
    return response;
  }

  /** Releases the handle and every listener. Idempotent. */
  finish(): void {
    if (this.phase === DONE) return;
    this.phase = DONE;
    this.handle?.cancel();
    this.controller = undefined;
    this.body = undefined;
    if (this.callerSignal !== undefined) {
      this.callerSignal.removeEventListener('abort', this.onCallerAbort!);
      this.callerSignal = undefined;
    }
    if (this.deadline !== undefined) {
      this.deadline.signal.removeEventListener('abort', this.onDeadlineAbort!);
      this.deadline = undefined;
    }
  }

  pullStarted(): void {
    this.pulling = true;
    const idleMs = this.options.bodyIdleMs;
    if (idleMs === Infinity) return;
    const now = this.wheel.clock.now();
    this.idleAt = now + idleMs;
    // Usually later than the armed expiry: the wheel then only rewrites it (lazy re-filing).
    this.arm(this.idleAt < this.totalAt ? this.idleAt : this.totalAt, now);
  }

  chunkArrived(): void {
    this.pulling = false;
  }

  bodyDone(): void {
    this.finish();
  }

  bodyError(error: unknown): unknown {
    return this.attemptFailed(error);
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
          this.expire(this.error('headers', this.options.headersMs, `no response headers within ${this.options.headersMs} ms (headersMs)`));
        } else {
          this.expire(this.totalError());
        }
        return;
      case BODY:
        if (now >= this.totalAt) {
          this.expire(this.totalError());
        } else if (this.pulling && now >= this.idleAt) {
          this.expire(this.error('body', this.options.bodyIdleMs, `no body data for ${this.options.bodyIdleMs} ms (bodyIdleMs)`));
        } else {
          // The idle limit passed while the consumer, not the server, was busy: only total remains.
          this.arm(this.pulling && this.idleAt < this.totalAt ? this.idleAt : this.totalAt, now);
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
    const left = this.deadlineLeft;
    if (left === undefined) {
      return this.error('total', this.options.budgetMs, `not complete within the retry budget of ${this.options.budgetMs} ms (retry.budgetMs)`);
    }
    return left === 0
      ? this.error('total', 0, 'the ambient deadline had already passed; fetch was not called')
      : this.error('total', left, `not complete within the ${Math.round(left)} ms left of the ambient deadline`);
  }

  private totalError(): TimeoutError {
    if (this.totalIsBudget) return this.budgetError();
    return this.error('total', this.options.totalMs, `not complete within ${this.options.totalMs} ms (totalMs)`);
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

  private error(phase: TimeoutError['phase'], timeoutMs: number, what: string): TimeoutError {
    return new TimeoutError(`${this.method} ${this.url}: ${what}`, phase, timeoutMs, this.url, this.method);
  }
}

function ignore(): void {}
