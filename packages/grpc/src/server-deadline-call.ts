/**
 * The per-call state of the server interceptor: the handler's deadline scope and its DEADLINE_EXCEEDED.
 */
import { Metadata, status as Status } from '@grpc/grpc-js';
import type { Deadline, ServerInterceptingCallInterface, StatusObject } from '@grpc/grpc-js';
import { captureContext, deadlineExceededReason, type DeadlineScope, type TimingWheel } from '@tickwheel/core';
import { holdReading, ownedDeadline, releaseReading, type DeadlineOwner } from '@tickwheel/core/internal';
import { SERVER_SOURCES, serverBudget } from './call-budget.js';
import { deadlineChannel, publishDeadline, publishHandlerAbort, type HandlerAbortReason } from './channels.js';
import { DEADLINE_TRAILER, deadlineTrailer, SERVER_DEADLINE_DETAILS } from './details.js';
import { parseGrpcTimeout, TICKWHEEL_TIMEOUT_HEADER } from './grpc-timeout.js';
import { isTimeout } from './parent-abort.js';
import type { ServerDeadlineLimit } from './types.js';

/** The listener grpc-js hands to `start()`; the package does not export it by name. */
type InterceptingServerListener = Parameters<ServerInterceptingCallInterface['start']>[0];
type PartialStatus = Pick<StatusObject, 'code' | 'details'> & { metadata?: Metadata | null };

/** What the options say about one method, worked out on its first call and shared by its calls. */
export interface ServerMethodPlan {
  readonly path: string;
  /** Replaced by the interceptor when it is the shared wheel and someone closed it. */
  wheel: TimingWheel;
  readonly defaultTimeoutMs: number;
  readonly maxTimeoutMs: number;
  /**
   * Client-streaming and bidi handlers start at the request headers and hear of every message;
   * unary and server-streaming ones start at the half-close, before which grpc-js only buffers.
   */
  readonly requestStream: boolean;
}

const PARENT_ABORTED = 'Cancelled: the deadline this call inherited was aborted';

/** The reason the handler's signal aborts with when the client cancels the call. */
function clientCancelledReason(): DOMException {
  return new DOMException('The client cancelled the call', 'AbortError');
}

/**
 * Delivering one listener event inside a scope without a closure per event: `scope.run()` calls
 * its function at once, synchronously, so the event waits in these variables for the one shared
 * function below (a closure and its context per call otherwise).
 */
const RECEIVE_METADATA = 0;
const RECEIVE_MESSAGE = 1;
const RECEIVE_HALF_CLOSE = 2;
const CANCEL = 3;
type ListenerEvent = typeof RECEIVE_METADATA | typeof RECEIVE_MESSAGE | typeof RECEIVE_HALF_CLOSE | typeof CANCEL;
let eventListener: InterceptingServerListener | undefined;
let eventKind: ListenerEvent = CANCEL;
let eventValue: unknown;

function deliverEvent(): void {
  const listener = eventListener!;
  const value = eventValue;
  eventListener = undefined;
  eventValue = undefined;
  switch (eventKind) {
    case RECEIVE_METADATA:
      return listener.onReceiveMetadata(value as Metadata);
    case RECEIVE_MESSAGE:
      return listener.onReceiveMessage(value);
    case RECEIVE_HALF_CLOSE:
      return listener.onReceiveHalfClose();
    case CANCEL:
      return listener.onCancel();
  }
}

/** Runs one event of `listener` with `scope` as the ambient deadline. */
function inScope(
  scope: DeadlineScope,
  listener: InterceptingServerListener,
  kind: ListenerEvent,
  value: unknown,
): void {
  eventListener = listener;
  eventKind = kind;
  eventValue = value;
  scope.run(deliverEvent);
}

/** The first value of a number field that must stay tagged (see the constructor). */
const TAGGED = null;

/** The wall clock when this module loaded: arrivals are kept relative to it (see the constructor). */
const LOADED_AT = Date.now();

/** The call's life. OPEN: events flow. FINISHED: one status went out, the rest is dropped. */
const WAITING = 0;
const OPEN = 1;
const FINISHED = 2;

/**
 * One server call under a deadline. It sits between grpc-js's call and the handler and:
 *
 * - works the deadline out from the request headers: the client's (`grpc-timeout`, read by
 *   grpc-js, or `tickwheel-timeout` for budgets grpc-js cannot read, which it removes), else the
 *   method's default, capped by its max;
 * - owns a deadline scope (core's `ownedDeadline`) that the handler sees as `currentDeadline()`;
 *   the scope calls the call's `deadlineAborted` (before its signal aborts), which sends `DEADLINE_EXCEEDED` when the deadline passes,
 *   or `CANCELLED` when an enclosing deadline the call inherited is aborted;
 * - runs the events that reach the handler inside that scope: the half-close for unary and
 *   server-streaming methods (their handler starts there), every event for client-streaming and
 *   bidi ones (their handler starts at the headers and listens to each message). grpc-js calls
 *   the handler synchronously from those events, so the handler and all the async work it starts
 *   see the deadline, with no wrapper of the service implementation;
 * - lets exactly one status out: after the first (the handler's, or the deadline's), every
 *   later status, message or header from the handler is dropped;
 * - aborts the scope when the client cancels (`scope.abort()`), so the handler's own work stops too.
 *
 * The call holds one wheel handle (the scope's) and never reads the scope's `signal`, so the
 * scope's AbortController exists only if the handler asks for it.
 *
 * It implements grpc-js's call interface rather than extending `ServerInterceptingCall`, whose
 * constructor allocates a responder object and seven fields this class never uses, and which
 * pushed its own fields out of the object into a property array (grpc-js only ever calls an
 * interceptor's result through the interface). The scope tells the call of its abort by a
 * method call (the call is the scope's `DeadlineOwner`), not through a bound `onAbort` or an
 * arrow class field (whose context every call kept): each would be held per call in flight.
 */
export class ServerDeadlineCall implements ServerInterceptingCallInterface, DeadlineOwner {
  private listener: InterceptingServerListener | undefined = undefined;
  private scope: DeadlineScope | undefined = undefined;
  private phase = WAITING;
  private limit: ServerDeadlineLimit = 'propagated';
  /** The context the call arrived in, for the deadline channel's subscribers (see core's channels.ts). */
  private readonly context: unknown = captureContext(deadlineChannel);
  /** The budget when the call arrived; final once the headers are read. */
  private budgetMs: number;
  /** When the call arrived, in wall-clock ms since this module loaded (see the constructor). */
  private readonly arrivedSinceLoad: number;
  /**
   * When the deadline started, on the wheel's clock, for the elapsed time the diagnostics report.
   * It cannot be worked out from the scope: under an earlier enclosing deadline the scope expires
   * sooner than this call's budget says. A fractional clock reading costs a heap box per call.
   */
  private startedAt = 0;

  /**
   * @param budgetMs - what the client's `grpc-timeout` left when the call arrived, `Infinity` for none
   * @param arrivedAt - the wall clock then, as grpc-js reports deadlines
   */
  constructor(
    private readonly next: ServerInterceptingCallInterface,
    private readonly plan: ServerMethodPlan,
    budgetMs: number,
    arrivedAt: number,
  ) {
    // Both are whole ms as a rule: kept in tagged fields (the tagged-field idiom,
    // ARCHITECTURE.md), they sit in the object as small integers. A number
    // field that ever held a fraction, or a Date.now() reading (past V8's 31-bit small
    // integers), takes a heap box per call; hence the arrival counted from the module's load.
    this.budgetMs = TAGGED as unknown as number;
    this.budgetMs = budgetMs;
    this.arrivedSinceLoad = TAGGED as unknown as number;
    this.arrivedSinceLoad = arrivedAt - LOADED_AT;
  }

  start(listener: InterceptingServerListener): void {
    this.listener = listener;
    this.next.start(this);
  }

  sendMetadata(metadata: Metadata): void {
    if (this.phase !== FINISHED) this.next.sendMetadata(metadata);
  }

  sendMessage(message: unknown, callback: () => void): void {
    if (this.phase !== FINISHED) this.next.sendMessage(message, callback);
  }

  sendStatus(status: PartialStatus): void {
    if (this.phase === FINISHED) return;
    this.phase = FINISHED;
    // The handler answered: its deadline is over. grpc-js still reports the stream's close to
    // onCancel after every call, which then runs outside any scope (an ALS run saved per call).
    const scope = this.scope;
    this.scope = undefined;
    scope?.dispose();
    this.next.sendStatus(status);
  }

  getDeadline(): Deadline {
    return LOADED_AT + this.arrivedSinceLoad + this.budgetMs;
  }

  startRead(): void {
    this.next.startRead();
  }

  getPeer(): string {
    return this.next.getPeer();
  }

  getHost(): string {
    return this.next.getHost();
  }

  getAuthContext(): ReturnType<ServerInterceptingCallInterface['getAuthContext']> {
    return this.next.getAuthContext();
  }

  getConnectionInfo(): ReturnType<ServerInterceptingCallInterface['getConnectionInfo']> {
    return this.next.getConnectionInfo();
  }

  getMetricsRecorder(): ReturnType<ServerInterceptingCallInterface['getMetricsRecorder']> {
    return this.next.getMetricsRecorder();
  }

  /** @internal Listener side: request headers (client-streaming and bidi handlers start here). */
  onReceiveMetadata(metadata: Metadata): void {
    if (this.phase === WAITING && !this.begin(metadata)) return;
    if (this.phase === FINISHED) return;
    const scope = this.scope;
    if (scope !== undefined && this.plan.requestStream) inScope(scope, this.listener!, RECEIVE_METADATA, metadata);
    else this.listener!.onReceiveMetadata(metadata);
  }

  /** @internal Listener side: a request message. */
  onReceiveMessage(message: unknown): void {
    if (this.phase !== OPEN) return;
    const scope = this.scope;
    if (scope !== undefined && this.plan.requestStream) inScope(scope, this.listener!, RECEIVE_MESSAGE, message);
    else this.listener!.onReceiveMessage(message);
  }

  /** @internal Listener side: the client half-closed (unary and server-streaming handlers start here). */
  onReceiveHalfClose(): void {
    if (this.phase !== OPEN) return;
    const scope = this.scope;
    if (scope !== undefined) inScope(scope, this.listener!, RECEIVE_HALF_CLOSE, undefined);
    else this.listener!.onReceiveHalfClose();
  }

  /** @internal Listener side: the call ended, by our status, grpc-js's own deadline, or a client cancel. */
  onCancel(): void {
    const scope = this.scope;
    if (this.phase !== FINISHED) {
      this.phase = FINISHED;
      // grpc-js may time the grpc-timeout header itself too and end the call just before us.
      const expired = scope !== undefined && scope.remaining() === 0;
      if (expired) this.publishExpiry(this.elapsed());
      if (scope !== undefined) this.handlerAborted(expired ? 'deadline' : 'client-cancelled');
      scope?.abort(expired ? deadlineExceededReason() : clientCancelledReason());
    }
    if (this.listener === undefined) return;
    // Inside the scope when the call ended by a cancel or a deadline, so the handler's
    // 'cancelled' listener sees why in currentDeadline().signal.
    if (scope !== undefined) inScope(scope, this.listener, CANCEL, undefined);
    else this.listener.onCancel();
  }

  /**
   * The request headers are in: settle the budget and start the deadline.
   * @returns false when the call was answered at once (its budget was spent on arrival)
   */
  private begin(metadata: Metadata): boolean {
    this.phase = OPEN;
    const plan = this.plan;
    const long = metadata.get(TICKWHEEL_TIMEOUT_HEADER);
    if (long.length > 0) {
      metadata.remove(TICKWHEEL_TIMEOUT_HEADER);
      const sentMs = parseGrpcTimeout(String(long[0]));
      if (sentMs !== undefined && sentMs < this.budgetMs) this.budgetMs = sentMs;
    }
    let budgetMs = this.budgetMs;
    if (budgetMs === Infinity) {
      budgetMs = plan.defaultTimeoutMs;
      this.limit = 'default';
    }
    if (plan.maxTimeoutMs < budgetMs) {
      budgetMs = plan.maxTimeoutMs;
      this.limit = 'max';
    }
    if (budgetMs < 0) budgetMs = 0;
    this.budgetMs = budgetMs;
    if (budgetMs === Infinity) return true;
    const clock = plan.wheel.clock;
    // Held while the scope files its timer: no end-of-job callback per call (core's holdReading).
    this.startedAt = holdReading(clock);
    let scope: DeadlineScope;
    try {
      // Kept alive: the call's open stream holds the process anyway until the scope ends with
      // the call, and an unref'ed timer per call costs the wheel a keep-alive flip per request.
      scope = ownedDeadline(budgetMs, plan.wheel, this, true, SERVER_SOURCES[this.limit]);
    } finally {
      releaseReading(clock);
    }
    this.scope = scope;
    if (this.phase === OPEN) return true;
    // Spent on arrival (the scope aborted while it was being made): answer without running the handler.
    scope.dispose();
    return false;
  }

  /**
   * @internal The scope aborted: its deadline passed, or an enclosing deadline aborted. Runs before the
   * scope's signal aborts, so the status goes out before the handler hears of it. A client cancel
   * also aborts the scope, but `onCancel` has marked the call finished by then.
   */
  deadlineAborted(reason: unknown): void {
    if (this.phase === FINISHED) return;
    const spent = this.scope === undefined;
    this.phase = FINISHED;
    const path = this.plan.path;
    const timedOut = isTimeout(reason);
    if (timedOut) this.publishExpiry(spent ? 0 : this.elapsed());
    if (!spent) this.handlerAborted(timedOut ? 'deadline' : 'parent-aborted');
    if (!timedOut) {
      this.next.sendStatus({ code: Status.CANCELLED, details: PARENT_ABORTED, metadata: null });
      return;
    }
    // grpc-js's exact text, which clients match on; which limit fired travels in a trailer.
    const trailer = new Metadata();
    trailer.set(DEADLINE_TRAILER, deadlineTrailer(this.limit, this.budgetMs, path));
    this.next.sendStatus({ code: Status.DEADLINE_EXCEEDED, details: SERVER_DEADLINE_DETAILS, metadata: trailer });
  }

  /** Reports the deadline's expiry on the channel, with where the call's time went; `elapsedMs` 0 when spent on arrival. */
  private publishExpiry(elapsedMs: number): void {
    if (!deadlineChannel.hasSubscribers) return;
    const lateMs = elapsedMs === 0 ? 0 : elapsedMs - this.budgetMs;
    const budget = serverBudget(this.limit, this.budgetMs, elapsedMs, lateMs);
    publishDeadline('server', this.plan.path, this.limit, this.budgetMs, budget, this.context);
  }

  /** The handler's signal is about to abort. */
  private handlerAborted(reason: HandlerAbortReason): void {
    publishHandlerAbort(this.plan.path, reason, this.elapsed(), this.context);
  }

  /** Time since the deadline started, in ms. */
  private elapsed(): number {
    return this.plan.wheel.clock.now() - this.startedAt;
  }
}
