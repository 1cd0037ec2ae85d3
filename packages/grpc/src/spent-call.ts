/**
 * The call that is never made because its budget was spent before it started.
 */
import { InterceptingCall, Metadata } from '@grpc/grpc-js';
import type { InterceptingListener, status as Status } from '@grpc/grpc-js';
import type { TimeoutBudget } from '@tickwheel/core';
import { withBudget } from './call-budget.js';
import type { InterceptingCallInterface } from './deadline-call.js';

/** Stands in for the call that was never made: every operation is a no-op. */
class NoCall implements InterceptingCallInterface {
  cancelWithStatus(): void {}
  getPeer(): string {
    return '';
  }
  start(): void {}
  sendMessageWithContext(): void {}
  sendMessage(): void {}
  startRead(): void {}
  halfClose(): void {}
  getAuthContext(): null {
    return null;
  }
}

const NO_CALL = new NoCall();

/**
 * A call that fails without touching the network, because its budget was spent (or its parent
 * cancelled) before it was made. The status is delivered on the next tick, as grpc-js delivers
 * its own errors, so the caller's callback never runs inside its own `client.method()` call.
 */
export class SpentCall extends InterceptingCall {
  constructor(
    private readonly code: Status,
    private readonly details: string,
    private readonly budget?: TimeoutBudget,
  ) {
    super(NO_CALL);
  }

  override start(_metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    process.nextTick(() =>
      listener?.onReceiveStatus?.(
        withBudget({ code: this.code, details: this.details, metadata: new Metadata() }, this.budget),
      ),
    );
  }
}
