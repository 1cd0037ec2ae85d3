/**
 * A unary client call retried inside its deadline: attempts, per-attempt limits and backoff on the wheel.
 */
import { Metadata, status as Status } from '@grpc/grpc-js';
import type { InterceptingListener, StatusObject } from '@grpc/grpc-js';
import {
  captureContext,
  describeBudget,
  type Deadline,
  type TimeoutBudget,
  type TimerHandle,
  type TimingWheel,
} from '@tickwheel/core';
import { scheduleTaskAt, type TimerTask } from '@tickwheel/core/internal';
import { clientBudget, withBudget } from './call-budget.js';
import { deadlineChannel, publishDeadline } from './channels.js';
import { withTimeoutHeader, type ClientMethodPlan, type InterceptingCallInterface } from './deadline-call.js';
import { expiredDetails, perAttemptDetails } from './details.js';
import { unwatchParentAbort, watchParentAbort, type ParentAbortListener } from './parent-abort.js';
import { backoffMs, PUSHBACK_TRAILER, pushbackMs, type RetryPlan } from './retry-policy.js';
import type { DeadlineLimit } from './types.js';

type MessageContext = Parameters<InterceptingCallInterface['sendMessageWithContext']>[0];

const AMBIENT_CANCELLED = 'Cancelled: the deadline this call inherited was aborted (its parent call was cancelled)';
const NO_MESSAGE: unknown = Symbol('no message');

/** The header a retry carries with the number of attempts before it (gRFC A6). */
const PREVIOUS_ATTEMPTS_HEADER = 'grpc-previous-rpc-attempts';

/**
 * One attempt: the listener of its grpc-js call, and the task of its per-attempt timer. An event
 * from an attempt that is no longer the current one is dropped.
 */
class Attempt implements InterceptingListener, TimerTask {
  /** Response headers arrived: the attempt is committed and its outcome is the call's. */
  committed = false;
  timer: TimerHandle | undefined = undefined;

  constructor(
    private readonly owner: RetryCall,
    readonly call: InterceptingCallInterface,
    readonly number: number,
  ) {}

  onReceiveMetadata(metadata: Metadata): void {
    if (this.owner.current !== this) return;
    this.committed = true;
    this.timer?.cancel();
    this.owner.listener?.onReceiveMetadata?.(metadata);
  }

  onReceiveMessage(message: unknown): void {
    if (this.owner.current === this) this.owner.listener?.onReceiveMessage?.(message);
  }

  onReceiveStatus(status: StatusObject): void {
    this.timer?.cancel();
    if (this.owner.current === this) this.owner.attemptEnded(this, status);
  }

  /** The per-attempt limit passed with no response headers. */
  timerFired(): void {
    const owner = this.owner;
    this.call.cancelWithStatus(
      Status.DEADLINE_EXCEEDED,
      perAttemptDetails(owner.retry.perAttemptMs, this.number, owner.plan.path),
    );
  }
}

/** The wait between two attempts, as a wheel task. */
class Backoff implements TimerTask {
  constructor(private readonly owner: RetryCall) {}
  timerFired(): void {
    this.owner.backoffEnded();
  }
}

/**
 * A unary call under a deadline with gRFC A6 retries. Like {@link DeadlineCall} it is both the
 * call (towards the application) and, through its {@link Attempt}s, the listener (towards
 * grpc-js); unlike it, it keeps the request (headers, message, half-close) to replay on each
 * attempt.
 *
 * - The call's deadline (one wheel handle) bounds every attempt and every wait: a retry whose
 *   backoff would end at or after it is not made, and the last status is the call's.
 * - Each attempt sends `grpc-timeout` = the smaller of `perAttemptMs` and what is left, and has
 *   its own handle while it waits for response headers; at `perAttemptMs` it is cancelled with
 *   `DEADLINE_EXCEEDED`, which is retried when that code is listed.
 * - An attempt that received response headers is committed: its outcome is the call's.
 * - A `grpc-retry-pushback-ms` trailer sets the next delay (a value that is not a non-negative
 *   integer stops retrying), as A6 says.
 */
export class RetryCall implements InterceptingCallInterface, ParentAbortListener, TimerTask {
  listener: Partial<InterceptingListener> | undefined = undefined;
  current: Attempt | undefined = undefined;
  private metadata: Metadata | undefined = undefined;
  private message: unknown = NO_MESSAGE;
  private messageContext: MessageContext = {};
  private halfClosed = false;
  private reading = false;
  private attempts = 0;
  /** The retry number the next backoff is for (1: the first); back to 1 after a pushback. */
  private backoffStep = 1;
  private timer: TimerHandle | undefined = undefined;
  private backoff: TimerHandle | undefined = undefined;
  private cancelled = false;
  private finished = false;
  private readonly context: unknown = captureContext(deadlineChannel);
  /** Where the call's time went, once its deadline ended it: the caller's error carries it. */
  private budget: TimeoutBudget | undefined = undefined;

  /**
   * @param nextCall - makes the grpc-js call of one attempt (with `deadline: Infinity`)
   * @param takenAt - when the budget was taken, on `wheel`'s clock
   * @param budgetMs - the whole call's budget from `takenAt`, `Infinity` for none
   * @param inherited - the ambient deadline when it set a propagated budget, named in the timeout's budget
   */
  constructor(
    private readonly nextCall: () => InterceptingCallInterface,
    private readonly wheel: TimingWheel,
    readonly plan: ClientMethodPlan,
    readonly retry: RetryPlan,
    private readonly limit: DeadlineLimit,
    private readonly takenAt: number,
    private readonly budgetMs: number,
    private readonly ambientSignal: AbortSignal | undefined,
    private readonly inherited: Deadline | undefined,
  ) {}

  private expiresAt(): number {
    return this.takenAt + this.budgetMs;
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
    const expiresAt = this.expiresAt();
    if (expiresAt !== Infinity) this.timer = scheduleTaskAt(this.wheel, expiresAt, this);
    if (this.ambientSignal !== undefined) watchParentAbort(this.ambientSignal, this);
    this.startAttempt();
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.message = message;
    this.messageContext = context;
    this.current?.call.sendMessageWithContext(context, message);
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  halfClose(): void {
    this.halfClosed = true;
    this.current?.call.halfClose();
  }

  startRead(): void {
    this.reading = true;
    this.current?.call.startRead();
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.finished) return;
    this.cancelled = true;
    const attempt = this.current;
    if (attempt !== undefined) attempt.call.cancelWithStatus(code, details);
    else this.finish({ code, details, metadata: new Metadata() });
  }

  getPeer(): string {
    return this.current?.call.getPeer() ?? '';
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.current?.call.getAuthContext() ?? null;
  }

  /** @internal The server call this call was made for was cancelled. */
  onParentAbort(): void {
    this.cancelWithStatus(Status.CANCELLED, AMBIENT_CANCELLED);
  }

  /** @internal The whole call's deadline passed. */
  timerFired(): void {
    if (this.finished) return;
    const now = this.wheel.clock.now();
    const path = this.plan.path;
    const elapsedMs = now - this.takenAt;
    const budget = (this.budget = clientBudget(
      this.limit,
      this.budgetMs,
      this.plan.reserveMs,
      this.inherited,
      elapsedMs,
      now - this.timer!.expiresAt,
    ));
    publishDeadline('client', path, this.limit, this.budgetMs, budget, this.context);
    const details = `${expiredDetails(this.limit, this.budgetMs, path)}; ${describeBudget(budget)}`;
    const attempt = this.current;
    if (attempt !== undefined) attempt.call.cancelWithStatus(Status.DEADLINE_EXCEEDED, details);
    else this.finish({ code: Status.DEADLINE_EXCEEDED, details, metadata: new Metadata() });
  }

  /** @internal An attempt's status arrived: retry it, or make it the call's. */
  attemptEnded(attempt: Attempt, status: StatusObject): void {
    this.current = undefined;
    const retry = this.retry;
    const now = this.wheel.clock.now();
    const expiresAt = this.expiresAt();
    if (
      status.code === Status.OK ||
      attempt.committed ||
      this.cancelled ||
      now >= expiresAt ||
      this.attempts > retry.limit ||
      !retry.statusCodes.has(status.code)
    ) {
      this.finish(status);
      return;
    }
    const pushback = pushbackMs(status.metadata.get(PUSHBACK_TRAILER));
    if (pushback !== undefined && pushback < 0) {
      this.finish(status);
      return;
    }
    let delayMs: number;
    if (pushback === undefined) {
      delayMs = backoffMs(retry, this.backoffStep, Math.random());
      this.backoffStep++;
    } else {
      delayMs = pushback;
      this.backoffStep = 1;
    }
    // A retry that could only start at or after the deadline is not made.
    if (now + delayMs >= expiresAt) {
      this.finish(status);
      return;
    }
    this.backoff = scheduleTaskAt(this.wheel, now + delayMs, new Backoff(this));
  }

  /** @internal The wait before the next attempt is over. */
  backoffEnded(): void {
    this.backoff = undefined;
    if (!this.finished) this.startAttempt();
  }

  private startAttempt(): void {
    this.attempts++;
    const attempt = new Attempt(this, this.nextCall(), this.attempts);
    this.current = attempt;
    const now = this.wheel.clock.now();
    const leftMs = this.expiresAt() - now;
    const perAttemptMs = this.retry.perAttemptMs;
    const attemptMs = perAttemptMs < leftMs ? perAttemptMs : leftMs;
    let metadata = this.metadata!;
    if (this.attempts > 1) {
      // Each attempt its own copy (grpc-js's filters write to the metadata they are given),
      // saying how many went before, as gRFC A6 has retries do.
      metadata = metadata.clone();
      metadata.set(PREVIOUS_ATTEMPTS_HEADER, String(this.attempts - 1));
    }
    const sent = attemptMs === Infinity ? metadata : withTimeoutHeader(metadata, attemptMs);
    if (perAttemptMs < leftMs) attempt.timer = scheduleTaskAt(this.wheel, now + perAttemptMs, attempt);
    attempt.call.start(sent, attempt);
    if (this.message !== NO_MESSAGE) attempt.call.sendMessageWithContext(this.messageContext, this.message);
    if (this.halfClosed) attempt.call.halfClose();
    if (this.reading) attempt.call.startRead();
  }

  private finish(status: StatusObject): void {
    if (this.finished) return;
    this.finished = true;
    this.timer?.cancel();
    this.backoff?.cancel();
    this.current?.timer?.cancel();
    this.current = undefined;
    if (this.ambientSignal !== undefined) unwatchParentAbort(this.ambientSignal, this);
    this.listener?.onReceiveStatus?.(withBudget(status, this.budget));
  }
}
