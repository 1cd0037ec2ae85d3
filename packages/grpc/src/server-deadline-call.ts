import { ServerInterceptingCall, status as Status } from '@grpc/grpc-js';
import type { Deadline, Metadata, ServerInterceptingCallInterface, StatusObject } from '@grpc/grpc-js';
import { captureContext, createDeadline, deadlineExceededReason, type DeadlineScope, type TimingWheel } from '@tickwheel/core';
import { deadlineChannel, publishDeadline, publishHandlerAbort, type HandlerAbortReason } from './channels.js';
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
 * - owns a `createDeadline()` scope that the handler sees as `currentDeadline()`; the scope's
 *   `onAbort` (called before its signal aborts) sends `DEADLINE_EXCEEDED` when the deadline passes,
 *   or `CANCELLED` when an enclosing deadline the call inherited is aborted;
 * - runs every event it passes to the handler inside that scope, so the handler, and all the
 *   async work it starts, sees the deadline as `currentDeadline()`. grpc-js calls the handler
 *   synchronously from those events (from the metadata for client-streaming and bidi methods,
 *   from the half-close for unary and server-streaming ones), which is why an interceptor alone
 *   can carry the context and no wrapper of the service implementation is needed;
 * - lets exactly one status out: after the first (the handler's, or the deadline's), every
 *   later status, message or header from the handler is dropped;
 * - aborts the scope when the client cancels (`scope.abort()`), so the handler's own work stops too.
 *
 * The call holds one wheel handle (the scope's) and never reads the scope's `signal`, so the
 * scope's AbortController exists only if the handler asks for it.
 */
export class ServerDeadlineCall extends ServerInterceptingCall {
  private listener: InterceptingServerListener | undefined;
  private scope: DeadlineScope | undefined;
  /** Set when the budget was spent on arrival: the scope aborted while it was being created. */
  private spentReason: unknown;
  private spent = false;
  private finished = false;
  /** The context the call arrived in, for the deadline channel's subscribers (see core's channels.ts). */
  private readonly context: unknown = captureContext(deadlineChannel);

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
    this.scope = createDeadline(left > 0 ? left : 0, { wheel: this.wheel, onAbort: this.onScopeAbort });
    if (this.spent) {
      // Spent on arrival: answer without running the handler.
      this.finished = true;
      this.scope.dispose();
      if (isTimeout(this.spentReason)) publishDeadline('server', this.path, this.limit, this.budgetMs, 0, this.context);
      this.next.sendStatus(this.statusFor(this.spentReason, spentDetails(this.limit, this.path)));
      return;
    }
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
      // grpc-js times the grpc-timeout header itself too and may end the call just before us.
      const expired = scope.remaining() === 0;
      if (expired) publishDeadline('server', this.path, this.limit, this.budgetMs, this.elapsed(), this.context);
      this.handlerAborted(expired ? 'deadline' : 'client-cancelled');
      scope.abort(expired ? deadlineExceededReason() : clientCancelledReason());
    }
    scope.run(() => this.listener!.onCancel());
  }

  /**
   * The scope aborted: its deadline passed, or an enclosing deadline aborted. Runs before the
   * scope's signal aborts, so the status goes out before the handler hears of it. A client cancel
   * also aborts the scope, but `onCancel` has marked the call finished by then.
   */
  private readonly onScopeAbort = (reason: unknown): void => {
    if (this.scope === undefined) {
      this.spent = true;
      this.spentReason = reason;
      return;
    }
    if (this.finished) return;
    this.finished = true;
    const timedOut = isTimeout(reason);
    if (timedOut) publishDeadline('server', this.path, this.limit, this.budgetMs, this.elapsed(), this.context);
    this.handlerAborted(timedOut ? 'deadline' : 'parent-aborted');
    this.next.sendStatus(this.statusFor(reason, expiredDetails(this.limit, this.budgetMs, this.path)));
  };

  /** The handler's signal is about to abort. */
  private handlerAborted(reason: HandlerAbortReason): void {
    publishHandlerAbort(this.path, reason, this.elapsed(), this.context);
  }

  /** Time since the call arrived, in ms. */
  private elapsed(): number {
    return this.wheel.clock.now() - (this.expiresAt - this.budgetMs);
  }

  private statusFor(reason: unknown, deadlineDetails: string): PartialStatus {
    return isTimeout(reason)
      ? { code: Status.DEADLINE_EXCEEDED, details: deadlineDetails, metadata: null }
      : { code: Status.CANCELLED, details: PARENT_ABORTED, metadata: null };
  }
}
