/**
 * The per-call state of the client interceptor: the call's deadline and stream-idle timers on the wheel.
 */
import { status as Status } from '@grpc/grpc-js';
import type { InterceptingListener, Metadata, NextCall, StatusObject } from '@grpc/grpc-js';
import {
  captureContext,
  describeBudget,
  type Deadline,
  type TimeoutBudget,
  type TimerHandle,
  type TimingWheel,
} from '@tickwheel/core';
import { holdReading, ownBudget, releaseReading, scheduleTaskAt, type TimerTask } from '@tickwheel/core/internal';
import { clientBudget, withBudget } from './call-budget.js';
import { deadlineChannel, publishDeadline } from './channels.js';
import { expiredDetails, idleDetails } from './details.js';
import {
  GRPC_TIMEOUT_HEADER,
  grpcTimeoutValue,
  MAX_GRPC_TIMEOUT_MS,
  parseGrpcTimeout,
  TICKWHEEL_TIMEOUT_HEADER,
} from './grpc-timeout.js';
import { unwatchParentAbort, watchParentAbort, type ParentAbortListener } from './parent-abort.js';
import type { RetryPlan } from './retry-policy.js';
import type { DeadlineLimit } from './types.js';

/** What `nextCall()` returns; grpc-js does not export the interface under its name. */
export type InterceptingCallInterface = ReturnType<NextCall>;
type MessageContext = Parameters<InterceptingCallInterface['sendMessageWithContext']>[0];

/** What the client interceptor's options say about one method, worked out on its first call and shared by its calls. */
export interface ClientMethodPlan {
  /** `'/pkg.Service/Method'`. */
  readonly path: string;
  /** The configured timeout, `Infinity` for none. */
  readonly timeoutMs: number;
  /** Where `timeoutMs` came from. */
  readonly timeoutFrom: 'default' | 'service' | 'method';
  /** The response stream's idle limit; `Infinity` for none, and for a unary response. */
  readonly idleMs: number;
  /** Taken off a propagated budget; 0 for none. */
  readonly reserveMs: number;
  /** The least propagated budget (after the reserve) worth sending; 0 for none. */
  readonly minBudgetMs: number;
  /** Retries of a unary method; `undefined` for none (and for every streaming method). */
  readonly retry: RetryPlan | undefined;
}

/**
 * The metadata to send for a call with `leftMs` to go. A `grpc-timeout` the caller wrote itself
 * (a proxy forwarding its incoming metadata) is one more deadline: when it is no longer than
 * ours, or is not a value we can read, it goes out untouched, so the server answers as it would
 * bare (a malformed one with INTERNAL) and enforces it as grpc-js leaves it to; otherwise ours
 * replaces it. Ours is written on a copy: the caller may reuse its Metadata for other calls.
 */
export function withTimeoutHeader(metadata: Metadata, leftMs: number): Metadata {
  const callers = metadata.get(GRPC_TIMEOUT_HEADER);
  if (callers.length > 0) {
    const callersMs = parseGrpcTimeout(String(callers[0]));
    if (callersMs === undefined || callersMs <= leftMs) return metadata;
  }
  const sent = metadata.clone();
  if (leftMs <= MAX_GRPC_TIMEOUT_MS) {
    sent.set(GRPC_TIMEOUT_HEADER, grpcTimeoutValue(leftMs));
  } else {
    if (callers.length > 0) sent.remove(GRPC_TIMEOUT_HEADER);
    sent.set(TICKWHEEL_TIMEOUT_HEADER, grpcTimeoutValue(leftMs));
  }
  return sent;
}

/** The first value of a number field that must stay tagged (see the constructor). */
const TAGGED = null;

/** Why a handler's outgoing call stops when the server call it was made for is cancelled. */
const AMBIENT_CANCELLED = 'Cancelled: the deadline this call inherited was aborted (its parent call was cancelled)';

/**
 * One client call under a deadline: the link of the interceptor chain that owns the call's
 * single wheel handle.
 *
 * It is both the call (towards the application) and the listener (towards grpc-js), and
 * forwards every event straight to its neighbour: unlike a `RequesterBuilder`/`ListenerBuilder`
 * interceptor it allocates nothing per message, and per call only itself, its timer and the
 * timer's callback. It implements grpc-js's call interface rather than extending its
 * `InterceptingCall`, whose seven fields and requester it would never use; grpc-js only ever
 * calls an interceptor's result through that interface.
 *
 * What differs from call to call is kept to a minimum: the method's settings stay in its shared
 * plan. Each number field that holds a fraction takes a heap box of its own per call: of the
 * clock readings it keeps only its start, with the budget beside it as a whole number in a
 * tagged field (the deadline is their sum).
 *
 * The handle expires at the earlier of the deadline and, for a response stream with an idle
 * limit, the last received message plus that limit. A message pushes it later with an O(1)
 * `refresh()`; the status cancels it.
 */
export class DeadlineCall implements InterceptingCallInterface, InterceptingListener, ParentAbortListener, TimerTask {
  private listener: Partial<InterceptingListener> | undefined = undefined;
  private timer: TimerHandle | undefined = undefined;
  /** The caller's context for the deadline channel's subscribers (see core's channels.ts). */
  private readonly context: unknown = captureContext(deadlineChannel);

  /** The call's budget from `takenAt`, `Infinity` for none (idle limit only); see the constructor. */
  private readonly budgetMs: number;
  /** Where the call's time went, once one of its limits ended it: the caller's error carries it. */
  private budget: TimeoutBudget | undefined = undefined;

  /**
   * @param next - the rest of the chain, made with `deadline: Infinity` so that grpc-js runs no timer of its own
   * @param plan - what the options say about the method: its path, configured timeout and idle limit
   * @param limit - the limit that set the budget
   * @param takenAt - when the interceptor read the clock to work the deadline out: the call's budget counts from there
   * @param budgetMs - the time the call has from `takenAt` (its deadline is `takenAt + budgetMs` on `wheel`'s clock)
   * @param ambientSignal - the ambient deadline's signal; when a cancel aborts it, this call is cancelled
   * @param inherited - the ambient deadline when it set a propagated budget, named in the timeout's budget
   */
  constructor(
    private readonly next: InterceptingCallInterface,
    private readonly wheel: TimingWheel,
    private readonly plan: ClientMethodPlan,
    private readonly limit: DeadlineLimit,
    private readonly takenAt: number,
    budgetMs: number,
    private readonly ambientSignal: AbortSignal | undefined,
    private readonly inherited: Deadline | undefined,
  ) {
    // The budget, not the deadline, is what the call keeps: a configured or `deadline` budget is
    // a whole number of ms, which a tagged field holds in the object, where a deadline on the
    // clock is a fraction and takes a heap box per call. The field is kept tagged by the
    // tagged-field idiom (ARCHITECTURE.md).
    this.budgetMs = TAGGED as unknown as number;
    this.budgetMs = budgetMs;
  }

  /** The call's deadline on the wheel's clock, `Infinity` for none. */
  private expiresAt(): number {
    return this.takenAt + this.budgetMs;
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.listener = listener;
    const wheel = this.wheel;
    // Held while the timer is filed: no end-of-job callback per call (core's holdReading).
    const now = holdReading(wheel.clock);
    let sent: Metadata;
    try {
      const expiresAt = this.expiresAt();
      sent = expiresAt === Infinity ? metadata : withTimeoutHeader(metadata, expiresAt - now);
      const idleMs = this.plan.idleMs;
      const firstExpiry = idleMs < expiresAt - now ? now + idleMs : expiresAt;
      // Ref'ed, as grpc-js's own deadline timer is: a pending call's DEADLINE_EXCEEDED is always
      // delivered. It also spares the wheel a ref flip per call (schedule ref'ed, then unref()),
      // which the native driver applies in a microtask. The call is its timer's task (the wheel
      // calls timerFired): a bound method or an arrow would be one more object per call in flight.
      this.timer = scheduleTaskAt(wheel, firstExpiry, this);
    } finally {
      releaseReading(wheel.clock);
    }
    if (this.ambientSignal !== undefined) watchParentAbort(this.ambientSignal, this);
    this.next.start(sent, this);
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.next.sendMessageWithContext(context, message);
  }

  sendMessage(message: unknown): void {
    this.next.sendMessage(message);
  }

  halfClose(): void {
    this.next.halfClose();
  }

  cancelWithStatus(code: Status, details: string): void {
    this.next.cancelWithStatus(code, details);
  }

  startRead(): void {
    this.next.startRead();
  }

  getPeer(): string {
    return this.next.getPeer();
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.next.getAuthContext();
  }

  /** @internal Listener side: response headers. */
  onReceiveMetadata(metadata: Metadata): void {
    this.listener?.onReceiveMetadata?.(metadata);
  }

  /** @internal Listener side: a response message restarts the idle limit. */
  onReceiveMessage(message: unknown): void {
    const timer = this.timer;
    const idleMs = this.plan.idleMs;
    if (idleMs !== Infinity && timer !== undefined && timer.pending) {
      // Absolute, as the wheel keeps it: the next idle limit, never past the deadline.
      const idleAt = this.wheel.clock.now() + idleMs;
      const expiresAt = this.expiresAt();
      timer.refreshAt(idleAt < expiresAt ? idleAt : expiresAt);
    }
    this.listener?.onReceiveMessage?.(message);
  }

  /** @internal Listener side: the call is over, so is its timer. */
  onReceiveStatus(status: StatusObject): void {
    this.timer?.cancel();
    if (this.ambientSignal !== undefined) unwatchParentAbort(this.ambientSignal, this);
    this.listener?.onReceiveStatus?.(withBudget(status, this.budget));
  }

  /** @internal The server call this call was made for was cancelled. */
  onParentAbort(): void {
    this.next.cancelWithStatus(Status.CANCELLED, AMBIENT_CANCELLED);
  }

  /** @internal The wheel's call when the deadline or the idle limit passes. */
  timerFired(): void {
    const now = this.wheel.clock.now();
    const path = this.plan.path;
    const deadline = now >= this.expiresAt();
    const budgetMs = deadline ? this.budgetMs : 0;
    const idleMs = this.plan.idleMs;
    // The budget counts from the interceptor's reading, which grpc-js may take well before
    // start(): elapsed counts from there too, so it is never less than the budget it exceeded.
    const elapsedMs = now - this.takenAt;
    const lateMs = now - this.timer!.expiresAt;
    const budget = (this.budget = deadline
      ? clientBudget(this.limit, budgetMs, this.plan.reserveMs, this.inherited, elapsedMs, lateMs)
      : ownBudget('streamIdleMs', idleMs, elapsedMs, lateMs));
    const details = `${deadline ? expiredDetails(this.limit, budgetMs, path) : idleDetails(idleMs, path)}; ${describeBudget(budget)}`;
    publishDeadline(
      'client',
      path,
      deadline ? this.limit : 'stream-idle',
      deadline ? budgetMs : idleMs,
      budget,
      this.context,
    );
    this.next.cancelWithStatus(Status.DEADLINE_EXCEEDED, details);
  }
}
