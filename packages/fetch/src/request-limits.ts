/**
 * The limits of one request on ONE wheel handle: its phases, when each limit is due, and which one fired.
 * Must not depend on: another adapter, fetch, or how the body is watched (request-timer.ts does that).
 */
import { freshNow, type TimerHandle, type TimingWheel } from '@tickwheel/core';
import type { ResolvedOptions } from './options.js';
import { limitErrors, type TimeoutError } from './timeout-error.js';

/*
 * The phases of a request. The one timer handle of the request is re-pointed at each change
 * instead of allocating a timer per limit.
 */
/** Waiting for the response headers: the handle is armed for the earlier of headersAt and totalAt. */
export const HEADERS = 0;
/** The response was handed out and its body is on its way: armed for totalAt, or idleAt while the body waits on the server. */
export const BODY = 1;
/** Waiting before a retry: the handle is armed (and ref'ed) for the end of the backoff delay. */
export const BACKOFF = 2;
/** Completed, failed or aborted: the handle is cancelled and every listener removed. */
export const DONE = 3;

/**
 * When each limit of a request is due, on one wheel handle re-pointed at the earliest one that
 * applies in the current phase (headers, body, backoff):
 *
 * | phase | armed for |
 * | --- | --- |
 * | headers | the earlier of `headersMs` and `totalMs` from the attempt's start (and the budget) |
 * | body | `totalMs` (and the budget); the earlier of that and `bodyIdleMs` after the last chunk while the body waits on the server |
 * | backoff | the end of the retry's delay |
 *
 * The budget is the earlier of the retry budget (`retry.budgetMs` across attempts) and the
 * ambient deadline; `totalAt` is the attempt's `totalMs` or the budget, whichever comes first.
 * The idle limit is refreshed lazily per chunk (the wheel only rewrites the expiry of a handle
 * pushed later), so a body streaming at full speed costs a field write per chunk.
 *
 * The subclass ({@link RequestTimer}) decides what a fired limit does, in {@link expire}, and
 * when the body is waiting on the server, through {@link startWaiting} and {@link waiting}.
 */
export abstract class RequestLimits {
  protected readonly wheel: TimingWheel;
  private handle: TimerHandle | undefined;
  protected phase = HEADERS;
  /** When the whole request must be done (retry budget or ambient deadline); Infinity when unbounded. */
  private readonly budgetAt: number;
  /** The ambient deadline's remaining ms when it sets budgetAt; undefined when the retry budget does. */
  private readonly deadlineLeft: number | undefined;
  /** The fresh clock reading the request started at, reused by its first attempt (one read fewer). */
  private readonly startedAt: number;
  /** When the current attempt must be done: the earlier of its totalMs and budgetAt. */
  protected totalAt = Infinity;
  private totalIsBudget = false;
  private headersAt = Infinity;
  private idleAt = Infinity;
  /**
   * True while the body waits on the server: fetch is ready for more data (not paused by a
   * full buffer), or, for a relayed body, the consumer's read is pending. Only then does
   * bodyIdleMs run.
   */
  protected waiting = false;
  /** The attempt under way, from 0, and when it began (wheel clock): for the timeout channel. */
  protected attempt = -1;
  protected attemptStartedAt = 0;
  private backoffSettle: { resolve: () => void; reject: (reason: unknown) => void } | undefined;

  /**
   * @param deadlineLeft - the ambient deadline's remaining ms, or Infinity without one
   */
  constructor(
    protected readonly options: ResolvedOptions,
    readonly url: string,
    readonly method: string,
    deadlineLeft: number,
  ) {
    this.wheel = options.wheel;
    // A request costs far more than a clock read: start from a fresh one, not the job's.
    const now = freshNow(this.wheel.clock);
    this.startedAt = now;
    const retryBudgetAt = now + options.budgetMs;
    if (now + deadlineLeft < retryBudgetAt) {
      this.budgetAt = now + deadlineLeft;
      this.deadlineLeft = deadlineLeft;
    } else {
      this.budgetAt = retryBudgetAt;
    }
  }

  /**
   * Starts the limits of an attempt: the handle armed for the earlier of headersMs and totalMs.
   * @throws a TimeoutError when the budget is already spent
   */
  protected startAttempt(): void {
    const now = this.attempt < 0 ? this.startedAt : this.wheel.clock.now();
    if (now >= this.budgetAt) throw this.budgetError();
    this.phase = HEADERS;
    this.attempt++;
    this.attemptStartedAt = now;
    const attemptTotalAt = now + this.options.totalMs;
    this.totalIsBudget = this.budgetAt < attemptTotalAt;
    this.totalAt = this.totalIsBudget ? this.budgetAt : attemptTotalAt;
    this.headersAt = now + this.options.headersMs;
    this.arm(this.headersAt < this.totalAt ? this.headersAt : this.totalAt, now);
  }

  /**
   * How long to wait before retrying after `timedOut` (this attempt's own TimeoutError) ended
   * attempt number `attempt` (from 0), or undefined when it must not be retried: no retries
   * left, a method that is not retried, a total limit that is the budget's, or a budget that
   * the backoff would spend.
   */
  protected backoffDelay(timedOut: TimeoutError, attempt: number): number | undefined {
    const retry = this.options.retry;
    if (retry === undefined) return undefined;
    if (this.totalIsBudget && timedOut.phase === 'total') return undefined;
    if (attempt >= retry.limit || !retry.methods.has(this.method)) return undefined;
    const delay = retry.backoffMs * retry.backoffFactor ** attempt;
    return this.wheel.clock.now() + delay < this.budgetAt ? delay : undefined;
  }

  /** Waits `delayMs` on the request's handle (ref'ed meanwhile); rejects with {@link cancelBackoff}'s reason. */
  backoff(delayMs: number): Promise<void> {
    this.phase = BACKOFF;
    return new Promise<void>((resolve, reject) => {
      this.backoffSettle = { resolve, reject };
      this.arm(this.wheel.clock.now() + delayMs, this.wheel.clock.now());
      this.handle?.ref();
    });
  }

  /** Ends a pending backoff with `reason`. */
  protected cancelBackoff(reason: unknown): void {
    const backoff = this.backoffSettle;
    this.backoffSettle = undefined;
    backoff?.reject(reason);
  }

  /** The response's headers arrived: from now on totalMs applies, and bodyIdleMs while {@link waiting}. */
  protected startBody(now: number): void {
    this.phase = BODY;
    this.idleAt = now + this.options.bodyIdleMs;
    this.arm(this.waiting && this.idleAt < this.totalAt ? this.idleAt : this.totalAt, now);
  }

  /** The body waits on the server from now: bodyIdleMs runs. */
  protected startWaiting(): void {
    this.waiting = true;
    const idleMs = this.options.bodyIdleMs;
    if (idleMs === Infinity) return;
    const now = this.wheel.clock.now();
    this.idleAt = now + idleMs;
    // Usually later than the armed expiry: the wheel then only rewrites it (lazy re-filing).
    this.arm(this.idleAt < this.totalAt ? this.idleAt : this.totalAt, now);
  }

  /** Points the handle at `at` (wheel clock ms), or cancels it when `at` is Infinity. */
  protected arm(at: number, now: number): void {
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

  /** Cancels the handle: no limit applies any more. */
  protected disarm(): void {
    this.handle?.cancel();
  }

  private onTimer(): void {
    const now = this.wheel.clock.now();
    switch (this.phase) {
      case HEADERS:
        this.expire(
          this.headersAt <= this.totalAt ? limitErrors.headers(this, this.options.headersMs) : this.totalError(),
        );
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
  protected budgetError(): TimeoutError {
    return limitErrors.budget(this, this.options.budgetMs, this.deadlineLeft);
  }

  private totalError(): TimeoutError {
    return this.totalIsBudget ? this.budgetError() : limitErrors.total(this, this.options.totalMs);
  }

  /** A limit fired in the headers or body phase: end the attempt with `error`. */
  protected abstract expire(error: TimeoutError): void;
}
