/**
 * The limits of one request on ONE wheel handle: its phases, when each limit is due, and which one fired.
 */
import { freshNow, type Deadline, type TimerHandle, type TimingWheel } from '@tickwheel/core';
import { timeoutBudget } from '@tickwheel/core/internal';
import type { ResolvedOptions } from './options.js';
import {
  limitErrors,
  type FetchPhaseTimes,
  type FetchTimeoutBudget,
  type RequestRef,
  type TimeoutError,
} from './timeout-error.js';

/*
 * The phases of a request. The one timer handle of the request is re-pointed at each change
 * instead of allocating a timer per limit.
 */
/** Waiting for a connection that can carry the request (only with connectMs): armed for the earlier of connectAt and totalAt. */
export const CONNECT = 0;
/** Waiting for the response headers: the handle is armed for the earlier of headersAt and totalAt. */
export const HEADERS = 1;
/**
 * The response was handed out and its body is on its way: armed for totalAt, or idleAt while the
 * body waits on the server, or eventAt for an event stream, whichever comes first.
 */
export const BODY = 2;
/** Waiting before a retry: the handle is armed (and ref'ed) for the end of the backoff delay. */
export const BACKOFF = 3;
/** Completed, failed or aborted: the handle is cancelled and every listener removed. */
export const DONE = 4;
/**
 * The request body is going out (from undici's first pull of it to its last chunk leaving for
 * the OS): armed for totalAt, or the earlier of that and uploadIdleAt while the network has a
 * chunk to carry. headersMs does not run.
 */
export const UPLOAD = 5;

/*
 * The end of an upload as the server sees it comes later than its last chunk leaving for the
 * OS: the socket buffers, the sender's and the receiver's, still hold a part the server has yet
 * to read, and nothing tells the sender when it has (Node exposes no send-queue size). Linux
 * grows them on a fast link up to its defaults' maxima (tcp_wmem 4 MiB, tcp_rmem 6 MiB; on
 * loopback 3.9 MB was measured still buffered when a 12 MiB upload left the process). headersMs therefore starts once SOCKET_BUFFER_BYTES (at most
 * the bytes sent) could have reached the server at the pace the upload kept over its last third
 * to half, and no later than the upload's own duration after it: a server reading at full speed
 * adds a few ms, a slow one up to the time the upload took.
 */
/** What a sender's and a receiver's socket buffers may hold together: 1.5 times the most measured on loopback. */
export const SOCKET_BUFFER_BYTES = 6 * 1024 * 1024;
/** How far the byte count moves between pace checkpoints: the pace is measured over the last third to half of an upload. */
const PACE_STEP = 1.5;

/** What the limits need from the request they time. */
export interface LimitsOwner extends RequestRef {
  /** A limit fired in the connect, headers or body phase: end the attempt with `error`. */
  limitFired(error: TimeoutError): void;
  /** fetch sent the attempt through the transport tap, so the end of the connect phase will be seen. */
  connectObserved(): boolean;
}

/**
 * When each limit of a request is due, on one wheel handle re-pointed at the earliest one that
 * applies in the current phase (connect, headers, body, backoff):
 *
 * | phase | armed for |
 * | --- | --- |
 * | connect | the earlier of `connectMs` and `totalMs` from the attempt's start (and the budget) |
 * | upload | `totalMs`; the earlier of that and `uploadIdleMs` after the last chunk while the network carries it |
 * | headers | the earlier of `headersMs` (from the end of the upload, else from the send with `connectMs`, else from the attempt's start) and `totalMs` |
 * | body | `totalMs` (and the budget); the earlier of that and `bodyIdleMs` after the last chunk while the body waits on the server; for an event stream, also `firstEventMs` after the headers and `eventIdleMs` after the last progress event |
 * | backoff | the end of the retry's delay |
 *
 * The budget is the earlier of the retry budget (`retry.budgetMs` across attempts) and the
 * ambient deadline less `reserveMs`; `totalAt` is the attempt's `totalMs` or the budget,
 * whichever comes first. Every time is absolute on the wheel's clock, Infinity when off, and the
 * handle is pointed at it as such (`scheduleAt`, `refreshAt`): a limit is converted once, where it enters. The
 * idle limit is refreshed lazily per chunk (the wheel only rewrites the expiry of a handle
 * pushed later), so a body streaming at full speed costs a field write per chunk.
 *
 * The owner ({@link LimitsOwner}) decides what a fired limit does, and says when the body is
 * waiting on the server through {@link startWaiting} and {@link waiting}.
 */
export class RequestLimits {
  readonly wheel: TimingWheel;
  phase = HEADERS;
  /**
   * True while the body waits on the server: fetch is ready for more data (not paused by a
   * full buffer), or, for a relayed body, the consumer's read is pending. Only then does
   * bodyIdleMs run.
   */
  waiting = false;
  /** When the current attempt must be done: the earlier of its totalMs and budgetAt. */
  totalAt = Infinity;
  /** The attempt under way, from 0, and when it began (wheel clock): for the timeout channel. */
  attempt = -1;
  attemptStartedAt = 0;
  private handle: TimerHandle | undefined;
  /** When the whole request must be done (retry budget or ambient deadline); Infinity when unbounded. */
  private readonly budgetAt: number;
  /** The ambient deadline's ms left after reserveMs when it sets budgetAt; undefined when the retry budget does. */
  private readonly deadlineLeft: number | undefined;
  /** The fresh clock reading the request started at, reused by its first attempt (one read fewer). */
  private readonly startedAt: number;
  /** The part of the ambient deadline held back by reserveMs (less when less was left). */
  private reserved = 0;
  private totalIsBudget = false;
  private connectAt = Infinity;
  private headersAt = Infinity;
  private idleAt = Infinity;
  /** When an event stream's next progress event is due: Infinity when the body is no event stream or the limit is off. */
  private eventAt = Infinity;
  /** No progress event yet in this attempt's response: firstEventMs applies rather than eventIdleMs. */
  private firstEvent = true;
  /** The event limit passed while the consumer, not the server, held the body up: it restarts when the body waits again. */
  private eventDeferred = false;
  /** True while the network has a chunk of the request body to carry (uploadIdleMs runs). */
  private sending = false;
  private uploadIdleAt = Infinity;
  /** A limit ended this attempt: what undici still pulls of its body until fetch aborts is ignored. */
  private attemptFired = false;
  /** When the upload started, its bytes so far, and two checkpoints (bytes, time) for its recent pace. */
  private uploadStartAt = 0;
  private uploadBytes = 0;
  private paceBytes0 = 0;
  private paceAt0 = 0;
  private paceBytes1 = 0;
  private paceAt1 = 0;
  private backoffSettle: { resolve: () => void; reject: (reason: unknown) => void } | undefined;
  /*
   * Phase marks of the current attempt (wheel clock, -1 until reached), set where the clock is
   * read anyway; read only when a limit fires, for the phase times of its budget.
   */
  private connectedAt = -1;
  private uploadEndedAt = -1;
  private bodyStartedAt = -1;
  /** The backoff waits so far, made at the first retry. */
  private backoffs: number[] | undefined = undefined;

  /**
   * @param deadlineLeft - the ambient deadline's remaining ms, or Infinity without one
   * @param deadline - the ambient deadline, named in the budget of a timeout it causes
   */
  constructor(
    readonly options: ResolvedOptions,
    private readonly owner: LimitsOwner,
    deadlineLeft: number,
    private readonly deadline?: Deadline,
  ) {
    this.wheel = options.wheel;
    // A request costs far more than a clock read: start from a fresh one, not the job's.
    const now = freshNow(this.wheel.clock);
    this.startedAt = now;
    const retryBudgetAt = now + options.budgetMs;
    if (deadlineLeft !== Infinity) {
      this.reserved = deadlineLeft < options.reserveMs ? deadlineLeft : options.reserveMs;
      deadlineLeft -= this.reserved;
    }
    if (now + deadlineLeft < retryBudgetAt) {
      this.budgetAt = now + deadlineLeft;
      this.deadlineLeft = deadlineLeft;
    } else {
      this.budgetAt = retryBudgetAt;
    }
  }

  /**
   * Starts the limits of an attempt: the handle armed for its first limit.
   * @throws a TimeoutError when the budget is spent, or less than minBudgetMs is left of the ambient deadline's
   */
  startAttempt(): void {
    const now = this.attempt < 0 ? this.startedAt : this.wheel.clock.now();
    const options = this.options;
    if (this.deadlineLeft !== undefined) {
      // The budget is the ambient deadline's, less reserveMs: fail fast rather than send a call with no time to finish.
      const left = this.budgetAt - now;
      if (left + this.reserved > 0 && (left < options.minBudgetMs || left <= 0)) {
        throw limitErrors.minBudget(
          this.owner,
          left + this.reserved,
          options.reserveMs,
          options.minBudgetMs,
          this.budgetOf('minBudgetMs', options.minBudgetMs, true, now, 0),
        );
      }
    }
    if (now >= this.budgetAt) throw this.budgetError(0);
    this.attempt++;
    this.attemptStartedAt = now;
    this.attemptFired = false;
    this.connectedAt = this.uploadStartAt = this.uploadEndedAt = this.bodyStartedAt = -1;
    this.eventAt = Infinity;
    this.firstEvent = true;
    this.eventDeferred = false;
    const attemptTotalAt = now + options.totalMs;
    this.totalIsBudget = this.budgetAt < attemptTotalAt;
    this.totalAt = this.totalIsBudget ? this.budgetAt : attemptTotalAt;
    if (options.connectMs !== Infinity) {
      this.phase = CONNECT;
      this.connectAt = now + options.connectMs;
      this.headersAt = Infinity;
      this.arm(this.connectAt < this.totalAt ? this.connectAt : this.totalAt);
    } else {
      this.phase = HEADERS;
      this.headersAt = now + options.headersMs;
      this.arm(this.headersAt < this.totalAt ? this.headersAt : this.totalAt);
    }
  }

  /** The attempt's connection can carry the request and it is being sent: headersMs runs from now. */
  connected(): void {
    if (this.phase !== CONNECT) return;
    const now = this.wheel.clock.now();
    this.connectedAt = now;
    this.phase = HEADERS;
    this.headersAt = now + this.options.headersMs;
    this.arm(this.headersAt < this.totalAt ? this.headersAt : this.totalAt);
  }

  /**
   * undici asks for the request body's next chunk: the first time, the upload starts and
   * headersMs stops; afterwards the chunk before has left for the OS, and the body's source has
   * the upload until its next chunk (uploadIdleMs does not run).
   */
  uploadPulled(): void {
    const phase = this.phase;
    if (phase === UPLOAD) {
      this.sending = false;
      return;
    }
    if ((phase !== HEADERS && phase !== CONNECT) || this.attemptFired) return;
    const now = this.wheel.clock.now();
    this.phase = UPLOAD;
    this.sending = false;
    this.uploadStartAt = this.paceAt0 = this.paceAt1 = now;
    this.uploadBytes = this.paceBytes0 = this.paceBytes1 = 0;
    this.arm(this.totalAt);
  }

  /** A chunk of `bytes` goes to the network: uploadIdleMs runs from now. */
  uploadChunk(bytes: number): void {
    if (this.phase !== UPLOAD || this.attemptFired) return;
    const now = this.wheel.clock.now();
    this.sending = true;
    const sent = (this.uploadBytes += bytes);
    if (sent >= PACE_STEP * this.paceBytes1) {
      this.paceBytes0 = this.paceBytes1;
      this.paceAt0 = this.paceAt1;
      this.paceBytes1 = sent;
      this.paceAt1 = now;
    }
    const idleMs = this.options.uploadIdleMs;
    if (idleMs === Infinity) return;
    this.uploadIdleAt = now + idleMs;
    // Usually later than the armed expiry: the wheel then only rewrites it (lazy re-filing).
    this.arm(this.uploadIdleAt < this.totalAt ? this.uploadIdleAt : this.totalAt);
  }

  /** The request body has left for the OS: headersMs runs once the socket buffers should have drained. */
  uploadEnded(): void {
    if (this.phase !== UPLOAD || this.attemptFired) return;
    const now = this.wheel.clock.now();
    this.uploadEndedAt = now;
    this.phase = HEADERS;
    this.sending = false;
    this.headersAt = now + this.drainMs(now) + this.options.headersMs;
    this.arm(this.headersAt < this.totalAt ? this.headersAt : this.totalAt);
  }

  /** How long what the socket buffers may still hold takes to reach the server at the upload's recent pace. */
  private drainMs(now: number): number {
    const paced = this.uploadBytes - this.paceBytes0;
    const elapsed = now - this.uploadStartAt;
    if (paced <= 0 || elapsed <= 0) return 0;
    const buffered = this.uploadBytes < SOCKET_BUFFER_BYTES ? this.uploadBytes : SOCKET_BUFFER_BYTES;
    const drain = (buffered * (now - this.paceAt0)) / paced;
    return drain < elapsed ? drain : elapsed;
  }

  /** True when the attempt's total limit is the request's budget (a timeout of it is never retried). */
  get totalIsTheBudget(): boolean {
    return this.totalIsBudget;
  }

  /** `delayMs` when a retry after it would start before the budget ends, else undefined. */
  fitting(delayMs: number): number | undefined {
    return this.wheel.clock.now() + delayMs < this.budgetAt ? delayMs : undefined;
  }

  /** Waits `delayMs` on the request's handle (ref'ed meanwhile); rejects with {@link cancelBackoff}'s reason. */
  backoff(delayMs: number): Promise<void> {
    this.phase = BACKOFF;
    (this.backoffs ??= []).push(delayMs);
    return new Promise<void>((resolve, reject) => {
      this.backoffSettle = { resolve, reject };
      this.arm(this.wheel.clock.now() + delayMs);
      this.handle?.ref();
    });
  }

  /** Ends a pending backoff with `reason`. */
  cancelBackoff(reason: unknown): void {
    const backoff = this.backoffSettle;
    this.backoffSettle = undefined;
    backoff?.reject(reason);
  }

  /**
   * The response's headers arrived: from now on totalMs applies, and bodyIdleMs while {@link waiting}.
   * @param events - the body is an event stream that is scanned: firstEventMs and eventIdleMs apply
   */
  startBody(now: number, events: boolean): void {
    this.phase = BODY;
    this.bodyStartedAt = now;
    this.idleAt = now + this.options.bodyIdleMs;
    if (events) this.eventAt = now + this.eventLimitMs();
    this.arm(this.bodyDue());
  }

  /** The body waits on the server from now: bodyIdleMs runs. */
  startWaiting(): void {
    this.waiting = true;
    if (this.eventDeferred) {
      this.eventDeferred = false;
      this.eventAt = this.wheel.clock.now() + this.eventLimitMs();
      this.arm(this.bodyDue());
    }
    const idleMs = this.options.bodyIdleMs;
    if (idleMs === Infinity) return;
    const now = this.wheel.clock.now();
    this.idleAt = now + idleMs;
    // Usually later than the armed expiry: the wheel then only rewrites it (lazy re-filing).
    const at = this.idleAt < this.totalAt ? this.idleAt : this.totalAt;
    this.arm(this.eventAt < at ? this.eventAt : at);
  }

  /** An event stream's progress event arrived: eventIdleMs runs from now (from the headers before they are handed out). */
  progress(): void {
    this.firstEvent = false;
    if (this.phase !== BODY || this.eventAt === Infinity) return;
    const idleMs = this.options.eventIdleMs;
    this.eventAt = idleMs === Infinity ? Infinity : this.wheel.clock.now() + idleMs;
    // Usually later than the armed expiry: the wheel then only rewrites it (lazy re-filing).
    this.arm(this.bodyDue());
  }

  /** The limit until the next progress event: firstEventMs before the first one (when set), else eventIdleMs. */
  private eventLimitMs(): number {
    const firstMs = this.options.firstEventMs;
    return this.firstEvent && firstMs !== Infinity ? firstMs : this.options.eventIdleMs;
  }

  /** The earliest limit of the body phase. */
  private bodyDue(): number {
    let at = this.totalAt;
    if (this.waiting && this.idleAt < at) at = this.idleAt;
    return this.eventAt < at ? this.eventAt : at;
  }

  /** Cancels the handle and ends the request: no limit applies any more. */
  finish(): void {
    this.phase = DONE;
    this.handle?.cancel();
  }

  /**
   * The error for the budget: the ambient deadline's or the retry budget's.
   * @param lateMs - how long after its due time the timer that ended it ran
   */
  budgetError(lateMs: number): TimeoutError {
    const inherited = this.deadlineLeft !== undefined;
    const budget = inherited
      ? this.budgetOf('deadline', 0, true, this.wheel.clock.now(), lateMs)
      : this.budgetOf('retry.budgetMs', this.options.budgetMs, false, this.wheel.clock.now(), lateMs);
    return limitErrors.budget(this.owner, this.options.budgetMs, this.deadlineLeft, budget);
  }

  /**
   * Where the request's time went when `limit` (of `limitMs`, or the ambient deadline's when
   * `inherited`) ended it at `now`: computed only then, from the marks kept.
   */
  private budgetOf(
    limit: string,
    limitMs: number,
    inherited: boolean,
    now: number,
    lateMs: number,
  ): FetchTimeoutBudget {
    const deadline = this.deadline;
    // What the ambient deadline had left when the request started: clock-free, so a deadline on another wheel works too.
    const leftAtStart = inherited ? this.deadlineLeft! + this.reserved : 0;
    const budgetMs = inherited ? (deadline?.budgetMs ?? leftAtStart) : limitMs;
    return timeoutBudget({
      limit,
      inherited,
      source: inherited ? deadline?.source : undefined,
      budgetMs,
      spentBeforeMs: inherited ? budgetMs - leftAtStart : 0,
      elapsedMs: now - this.startedAt,
      lateMs,
      attempts: this.attempt + 1,
      backoffMs: Object.freeze(this.backoffs === undefined ? [] : [...this.backoffs]),
      phasesMs: this.attempt < 0 ? NO_PHASES : this.phaseTimes(now),
    });
  }

  /** The time per phase of the current attempt until `now`, from its marks. */
  private phaseTimes(now: number): FetchPhaseTimes {
    const start = this.attemptStartedAt;
    const body = this.bodyStartedAt < 0 ? 0 : now - this.bodyStartedAt;
    const uploadStart = this.uploadStartAt;
    const upload = uploadStart < 0 ? 0 : (this.uploadEndedAt < 0 ? now : this.uploadEndedAt) - uploadStart;
    const connectEnd = this.connectedAt >= 0 ? this.connectedAt : this.phase === CONNECT ? now : start;
    const connect = connectEnd - start;
    const headers = now - start - connect - upload - body;
    return Object.freeze({
      connect: tenth(connect),
      upload: tenth(upload),
      headers: tenth(headers),
      body: tenth(body),
    });
  }

  /** Points the handle at `at` (wheel clock ms), or cancels it when `at` is Infinity. */
  private arm(at: number): void {
    if (at === Infinity) {
      this.handle?.cancel();
      return;
    }
    if (this.handle === undefined) {
      // Timeouts never hold the process open on their own: the socket does while it matters.
      this.handle = this.wheel.scheduleAt(at, () => this.onTimer()).unref();
    } else {
      this.handle.refreshAt(at);
    }
  }

  private onTimer(): void {
    const now = this.wheel.clock.now();
    switch (this.phase) {
      case CONNECT:
        if (this.connectAt > this.totalAt) {
          this.owner.limitFired(this.totalError(now));
        } else if (this.owner.connectObserved()) {
          this.owner.limitFired(
            limitErrors.connect(
              this.owner,
              this.options.connectMs,
              this.ownBudget('connectMs', this.options.connectMs, now),
            ),
          );
        } else {
          // A fetch that does not send through the tap: its connection cannot be seen, so
          // headersMs counts from the attempt's start, as without connectMs.
          this.phase = HEADERS;
          this.headersAt = this.attemptStartedAt + this.options.headersMs;
          this.arm(this.headersAt < this.totalAt ? this.headersAt : this.totalAt);
        }
        return;
      case UPLOAD:
        if (now >= this.totalAt) {
          this.attemptFired = true;
          this.owner.limitFired(this.totalError(now));
        } else if (this.sending && now >= this.uploadIdleAt) {
          this.attemptFired = true;
          this.owner.limitFired(
            limitErrors.upload(
              this.owner,
              this.options.uploadIdleMs,
              this.ownBudget('uploadIdleMs', this.options.uploadIdleMs, now),
            ),
          );
        } else {
          // The idle limit passed while the body's source, not the network, had the upload.
          this.arm(this.sending && this.uploadIdleAt < this.totalAt ? this.uploadIdleAt : this.totalAt);
        }
        return;
      case HEADERS:
        this.attemptFired = true;
        this.owner.limitFired(
          this.headersAt <= this.totalAt
            ? limitErrors.headers(
                this.owner,
                this.options.headersMs,
                this.ownBudget('headersMs', this.options.headersMs, now),
              )
            : this.totalError(now),
        );
        return;
      case BODY:
        if (now >= this.totalAt) {
          this.owner.limitFired(this.totalError(now));
        } else if (this.waiting && now >= this.idleAt) {
          this.owner.limitFired(
            limitErrors.body(
              this.owner,
              this.options.bodyIdleMs,
              this.ownBudget('bodyIdleMs', this.options.bodyIdleMs, now),
            ),
          );
        } else if (this.waiting && now >= this.eventAt) {
          const options = this.options;
          this.owner.limitFired(
            this.firstEvent && options.firstEventMs !== Infinity
              ? limitErrors.firstEvent(
                  this.owner,
                  options.firstEventMs,
                  this.ownBudget('firstEventMs', options.firstEventMs, now),
                )
              : limitErrors.eventIdle(
                  this.owner,
                  options.eventIdleMs,
                  this.ownBudget('eventIdleMs', options.eventIdleMs, now),
                ),
          );
        } else {
          if (now >= this.eventAt) {
            // The event limit passed while the consumer held the body up: it restarts once the body waits again.
            this.eventAt = Infinity;
            this.eventDeferred = true;
          }
          // The idle limit passed while the consumer, not the server, was busy: only total remains.
          this.arm(this.bodyDue());
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

  /** The budget of the attempt's own limit that fired at `now`, late by the handle's due time. */
  private ownBudget(limit: string, limitMs: number, now: number): FetchTimeoutBudget {
    return this.budgetOf(limit, limitMs, false, now, now - this.handle!.expiresAt);
  }

  private totalError(now: number): TimeoutError {
    return this.totalIsBudget
      ? this.budgetError(now - this.handle!.expiresAt)
      : limitErrors.total(this.owner, this.options.totalMs, this.ownBudget('totalMs', this.options.totalMs, now));
  }
}

/** The phases of a request that timed out before its first attempt. */
const NO_PHASES: FetchPhaseTimes = Object.freeze({ connect: 0, upload: 0, headers: 0, body: 0 });

/** A span rounded to 0.1 ms, as core rounds the budget's. */
function tenth(ms: number): number {
  return ms > 0 ? Math.round(ms * 10) / 10 : 0;
}
