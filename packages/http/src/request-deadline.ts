/**
 * One request under a handler deadline: its deadline scope, its timeout, and its end with the response.
 */
import { captureContext, type DeadlineScope } from '@tickwheel/core';
import {
  enterDeadline,
  holdReading,
  ownedDeadline,
  releaseReading,
  type DeadlineOwner,
} from '@tickwheel/core/internal';
import { reportTimeout, timeoutChannel, type TimeoutListener } from './channels.js';
import { callerLimitMs } from './deadline-policy.js';
import type { DeadlinePlan } from './options.js';
import { deadlineEnded } from './rejection-guard.js';
import { endTimedOut } from './timeout-answer.js';
import type { HttpTimeoutKind, TimedRequest, TimedResponse, TimeoutEvent } from './types.js';

/** A framework adapter's answer to a timeout (fastify's reply, koa's rejection): says what the client got. */
export type FrameworkAnswer = (kind: HttpTimeoutKind, status: number, limitMs: number) => TimeoutEvent['outcome'];

/**
 * Who a request's deadline reports to: serverTimeouts' controller, or a framework adapter's
 * standalone owner. One per server or middleware, never per request.
 */
export interface RequestOwner extends TimeoutListener {
  /** True once a drain began (serverTimeouts' `close()`). */
  readonly draining: boolean;
  /** The response closed (finished, cut, or the client went away). */
  requestClosed(record: RequestDeadline): void;
}

/** The request's life: OPEN until the response closes or a limit fires; ENDED after. */
const OPEN = 0;
const ENDED = 1;

/** The reason the handler's signal aborts with when the client goes away first. */
export function clientGoneReason(): DOMException {
  return new DOMException('The client went away before the response was sent', 'AbortError');
}

/** The reason the handler's signal aborts with when a limit other than its deadline ends the request. */
function limitReason(kind: HttpTimeoutKind): DOMException {
  return new DOMException(`The request's ${kind} limit passed`, 'TimeoutError');
}

/** The responses in flight under a deadline of ours, whoever made it: an adapter finds the request's own here. */
const records = new WeakMap<TimedResponse, RequestDeadline>();

/** The deadline record of `res`, if serverTimeouts or an adapter made one. */
export function recordOf(res: TimedResponse): RequestDeadline | undefined {
  return records.get(res);
}

/** What `res` emits 'close' to: its record hears of it (one shared function, no closure per request). */
function onResponseClose(this: TimedResponse): void {
  records.get(this)?.responseClosed();
}

/**
 * A request's deadline. It owns the deadline scope (core's `ownedDeadline`, one wheel handle)
 * that the handler sees as `currentDeadline()`, hears of the scope's end before the scope's
 * signal aborts (`deadlineAborted`, as the gRPC server call does), and ends with the response's
 * 'close'. How long the deadline is, is deadline-policy.ts' business. It lives in a WeakMap
 * keyed by the response: nothing is added to the request, the response or the socket.
 */
export class RequestDeadline implements DeadlineOwner {
  scope: DeadlineScope | undefined = undefined;
  /** The handler deadline in ms (Infinity: none). */
  limitMs = Infinity;
  /** The request's context for the channel's subscribers (see core's channels.ts). */
  context: unknown = undefined;
  /** A framework adapter's answer; without one, the answer goes through the response (timeout-answer.ts). */
  answer: FrameworkAnswer | undefined = undefined;
  /** Ends the response at once when a drain begins (stream-hooks.ts' `onDrain`). */
  drain: (() => void) | undefined = undefined;
  /** True once the request left its handler deadline for good (stream-hooks.ts' `releaseDeadline`). */
  released = false;
  private phase = OPEN;

  constructor(
    public owner: RequestOwner,
    public plan: DeadlinePlan,
    readonly req: TimedRequest,
    readonly res: TimedResponse,
  ) {
    records.set(res, this);
    res.on('close', onResponseClose);
  }

  /** True until the response closed or a limit fired. */
  get open(): boolean {
    return this.phase === OPEN;
  }

  /**
   * Starts a deadline of `limitMs` (replacing any earlier one: a route's replaces the app's),
   * then enters it as the ambient deadline for the rest of this run, so the listeners and
   * middleware after the caller run inside it.
   */
  start(limitMs: number): void {
    this.limitMs = limitMs;
    const old = this.scope;
    this.scope = undefined;
    old?.dispose();
    // Created outside whatever deadline is ambient here (a former request's, on the parser's context).
    enterDeadline(undefined);
    if (limitMs === Infinity || this.phase !== OPEN || this.released) return;
    const wheel = this.plan.wheel;
    holdReading(wheel.clock);
    let scope: DeadlineScope;
    try {
      // Kept alive: the open request holds the process anyway (see grpc's server-deadline-call.ts).
      scope = ownedDeadline(limitMs, wheel, this, true);
    } finally {
      releaseReading(wheel.clock);
    }
    if (this.context === undefined) this.context = captureContext(timeoutChannel);
    this.scope = scope;
    enterDeadline(scope);
  }

  /** Enters the request's deadline again (a framework whose handler runs later than the request's start). */
  enter(): void {
    if (this.scope !== undefined) enterDeadline(this.scope);
  }

  /** @internal The scope aborted: its deadline passed (we made it outside any other, so nothing else aborts it). */
  deadlineAborted(reason: unknown): void {
    if (this.phase !== OPEN) return;
    if (this.res.writableEnded) {
      // The handler has answered; its response is on its way out. Not a timeout.
      this.phase = ENDED;
      return;
    }
    this.end('handler', this.limitMs, this.plan.timeoutStatus, reason);
  }

  /**
   * A limit fired on the request (its deadline, or a connection's limit for it): answer or cut,
   * report, then abort the handler's signal.
   */
  end(kind: HttpTimeoutKind, limitMs: number, status: number, reason: unknown = limitReason(kind)): void {
    if (this.phase !== OPEN) return;
    this.phase = ENDED;
    const outcome = this.answer?.(kind, status, limitMs) ?? endTimedOut(this.req, this.res, status, kind);
    const propagated = kind === 'handler' && callerLimitMs(this.plan, this.req) === limitMs;
    reportTimeout(this.owner, kind, limitMs, outcome, this.req, propagated, this.context);
    const scope = this.scope;
    if (scope === undefined) return;
    deadlineEnded(scope);
    scope.abort(reason);
  }

  /** Takes the request out of its handler deadline for good; it stays in flight for a drain. */
  release(): void {
    this.released = true;
    const scope = this.scope;
    this.scope = undefined;
    scope?.dispose();
    enterDeadline(undefined);
  }

  /** Lets go of the request: its deadline no longer runs (serverTimeouts' `stop()`). */
  detach(): void {
    this.phase = ENDED;
    const scope = this.scope;
    this.scope = undefined;
    scope?.dispose();
  }

  /** The response closed: finished, cut by us, or the client went away. */
  responseClosed(): void {
    const scope = this.scope;
    this.scope = undefined;
    records.delete(this.res);
    if (this.phase === OPEN) {
      this.phase = ENDED;
      if (this.res.writableFinished) {
        scope?.dispose();
      } else if (scope !== undefined) {
        deadlineEnded(scope);
        scope.abort(clientGoneReason());
      }
    }
    this.owner.requestClosed(this);
  }
}
