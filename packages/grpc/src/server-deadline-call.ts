import { ServerInterceptingCall, status as Status } from '@grpc/grpc-js';
import type { Deadline, Metadata, ServerInterceptingCallInterface, StatusObject } from '@grpc/grpc-js';
import { createDeadline, currentDeadline, deadlineExceededReason, type DeadlineScope, type TimerHandle, type TimingWheel } from '@tickwheel/core';
import { expiredDetails, spentDetails } from './details.js';
import { isTimeout } from './parent-abort.js';
import type { ServerDeadlineLimit } from './types.js';

/** The listener grpc-js hands to `start()`; the package does not export it by name. */
type InterceptingServerListener = Parameters<ServerInterceptingCallInterface['start']>[0];
type PartialStatus = Pick<StatusObject, 'code' | 'details'> & { metadata?: Metadata | null };

const PARENT_ABORTED = 'Cancelled: the deadline this call inherited was aborted';

/** The reason the handler's signal aborts with when the client cancels the call. */
function clientCancelledReason(): DOMException {
  return new DOMException('The client cancelled the call', 'AbortError');
}

/**
 * One server call under a deadline. It sits between grpc-js's call and the handler and:
 *
 * - owns a `createDeadline()` scope that the handler sees as `currentDeadline()`, and a wheel
 *   handle of its own whose expiry sends `DEADLINE_EXCEEDED` and then aborts the scope;
 * - runs every event it passes to the handler inside that scope, so the handler, and all the
 *   async work it starts, sees the deadline as `currentDeadline()`. grpc-js calls the handler
 *   synchronously from those events (from the metadata for client-streaming and bidi methods,
 *   from the half-close for unary and server-streaming ones), which is why an interceptor alone
 *   can carry the context and no wrapper of the service implementation is needed;
 * - lets exactly one status out: after the first (the handler's, or the deadline's), every
 *   later status, message or header from the handler is dropped;
 * - aborts the scope when the client cancels (`scope.abort()`), so the handler's own work stops too.
 *
 * The call never reads the scope's `signal` in the usual case, so the scope's AbortController
 * exists only if the handler asks for it. The price is a second wheel handle (the scope's own
 * timer, due at the same time and filed after ours, so ours fires first): a few dozen bytes
 * against the kilobyte of an AbortSignal and its listener. Only a call that arrives inside an
 * enclosing deadline (a server started in a `withDeadline` block) listens to the signal, since
 * the enclosing deadline may abort the scope without the call's own timer knowing.
 */
export class ServerDeadlineCall extends ServerInterceptingCall {
  private listener: InterceptingServerListener | undefined;
  private scope: DeadlineScope | undefined;
  /** Reports the deadline, in the usual case; `undefined` when the call listens to the scope's signal instead. */
  private timer: TimerHandle | undefined;
  private listening = false;
  private finished = false;

  /**
   * @param expiresAt - the deadline on `wheel`'s clock
   * @param deadline - the same deadline on the wall clock, as grpc-js reports deadlines
   * @param budgetMs - what the call had when it arrived, for the status details
   */
  constructor(
    private readonly next: ServerInterceptingCallInterface,
    private readonly wheel: TimingWheel,
    private readonly path: string,
    private readonly limit: ServerDeadlineLimit,
    private readonly expiresAt: number,
    private readonly deadline: number,
    private readonly budgetMs: number,
  ) {
    super(next);
  }

  override start(listener: InterceptingServerListener): void {
    this.listener = listener;
    const left = this.expiresAt - this.wheel.clock.now();
    if (left > 0 && currentDeadline() === undefined) {
      // Filed before the scope's timer, which is due at the same time or later (createDeadline
      // reads the clock again); the wheel fires one tick's timers in filing order: ours first.
      this.timer = this.wheel.scheduleAt(this.expiresAt, () => this.expire()).unref();
    }
    const scope = createDeadline(left > 0 ? left : 0, { wheel: this.wheel });
    if (this.timer === undefined) {
      const signal = scope.signal;
      if (signal.aborted) {
        // Spent on arrival: answer without running the handler.
        this.finished = true;
        this.next.sendStatus(this.statusFor(signal.reason, spentDetails(this.limit, this.path)));
        return;
      }
      signal.addEventListener('abort', this);
      this.listening = true;
    }
    this.scope = scope;
    this.next.start(this);
  }

  override sendMetadata(metadata: Metadata): void {
    if (!this.finished) this.next.sendMetadata(metadata);
  }

  override sendMessage(message: unknown, callback: () => void): void {
    if (!this.finished) this.next.sendMessage(message, callback);
  }

  override sendStatus(status: PartialStatus): void {
    if (this.finished) return;
    this.finished = true;
    this.release();
    this.scope!.dispose();
    this.next.sendStatus(status);
  }

  override getDeadline(): Deadline {
    return this.deadline;
  }

  /** @internal Listener side: request headers (client-streaming and bidi handlers start here). */
  onReceiveMetadata(metadata: Metadata): void {
    if (!this.finished) this.scope!.run(() => this.listener!.onReceiveMetadata(metadata));
  }

  /** @internal Listener side: a request message. */
  onReceiveMessage(message: unknown): void {
    if (!this.finished) this.scope!.run(() => this.listener!.onReceiveMessage(message));
  }

  /** @internal Listener side: the client half-closed (unary and server-streaming handlers start here). */
  onReceiveHalfClose(): void {
    if (!this.finished) this.scope!.run(() => this.listener!.onReceiveHalfClose());
  }

  /** @internal Listener side: the call ended, by our status, grpc-js's own deadline, or a client cancel. */
  onCancel(): void {
    const scope = this.scope!;
    if (!this.finished) {
      this.finished = true;
      this.release();
      // grpc-js times the grpc-timeout header itself too and may end the call just before us.
      scope.abort(scope.remaining() === 0 ? deadlineExceededReason() : clientCancelledReason());
    }
    scope.run(() => this.listener!.onCancel());
  }

  /** @internal The scope's signal aborted: its deadline passed, or an enclosing deadline aborted. */
  handleEvent(): void {
    if (this.finished) return;
    this.finished = true;
    const reason: unknown = this.scope!.signal.reason;
    this.release();
    this.next.sendStatus(this.statusFor(reason, expiredDetails(this.limit, this.budgetMs, this.path)));
  }

  /** Our own timer fired: the deadline passed. The status goes out before the handler hears of it. */
  private expire(): void {
    this.finished = true;
    this.timer = undefined;
    this.next.sendStatus({ code: Status.DEADLINE_EXCEEDED, details: expiredDetails(this.limit, this.budgetMs, this.path), metadata: null });
    this.scope!.abort(deadlineExceededReason());
  }

  private statusFor(reason: unknown, deadlineDetails: string): PartialStatus {
    return isTimeout(reason)
      ? { code: Status.DEADLINE_EXCEEDED, details: deadlineDetails, metadata: null }
      : { code: Status.CANCELLED, details: PARENT_ABORTED, metadata: null };
  }

  /** Stops watching for the deadline. */
  private release(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.listening) {
      this.listening = false;
      this.scope!.signal.removeEventListener('abort', this);
    }
  }
}
