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
import { publishTimeout, timeoutChannel } from './channels.js';
import { callerBudgetFromRaw } from './deadline-headers.js';
import type { DeadlinePlan } from './options.js';
import { deadlineEnded } from './rejection-guard.js';
import { endTimedOut } from './timeout-answer.js';
import type { HttpTimeoutKind, TimedRequest, TimedResponse, TimeoutEvent } from './types.js';

/**
 * Ends a timed-out request on the wire or through the framework, and says what the client got.
 * Called once, before the handler's signal aborts. One function per adapter, never per request.
 */
export type Answerer = (record: RequestDeadline, kind: HttpTimeoutKind, status: number) => TimeoutEvent['outcome'];

/**
 * Who a request's deadline reports to: serverTimeouts' controller, or a framework adapter's
 * standalone owner. One per server or middleware, never per request.
 */
export interface RequestOwner {
  /** True once a drain began (serverTimeouts' `close()`). */
  readonly draining: boolean;
  /** A limit fired on the request: report it (events, diagnostics). */
  timedOut(record: RequestDeadline, kind: HttpTimeoutKind, limitMs: number, outcome: TimeoutEvent['outcome']): void;
  /** The response closed (finished, cut, or the client went away). */
  requestClosed(record: RequestDeadline, finished: boolean): void;
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
 * 'close'. It lives in a WeakMap keyed by the response: nothing is added to the request, the
 * response or the socket.
 */
export class RequestDeadline implements DeadlineOwner {
  scope: DeadlineScope | undefined = undefined;
  /** The deadline in ms (Infinity: none). */
  budgetMs = Infinity;
  /** True when the caller's deadline header set it. */
  propagated = false;
  /** The request's context for the channel's subscribers (see core's channels.ts). */
  context: unknown = undefined;
  /** How a timeout is answered: on the wire unless a framework adapter says otherwise. */
  answer: Answerer = answerOnWire;
  /** What a framework adapter keeps for its answer (fastify's reply, koa's rejection). */
  framework: unknown = undefined;
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
   * Works the deadline out from the plan and the caller's headers and starts it (replacing any
   * earlier one: a route's deadline replaces the app's), then enters it as the ambient deadline
   * for the rest of this run, so the listeners and middleware after the caller run inside it.
   * @param capMs - a cap on top of the plan's (a drain's grace)
   */
  start(capMs = Infinity): void {
    const plan = this.plan;
    const req = this.req;
    let budgetMs = plan.timeoutMs;
    if (plan.timeoutFor !== undefined) {
      const routeMs = plan.timeoutFor(req);
      if (routeMs !== undefined) budgetMs = routeMs === 0 ? Infinity : routeMs;
    }
    const callerMs =
      plan.deadlineHeaders.length === 0 ? Infinity : callerBudgetFromRaw(req.rawHeaders, plan.deadlineHeaders);
    this.propagated = callerMs < budgetMs;
    if (this.propagated) budgetMs = callerMs;
    if (plan.maxTimeoutMs < budgetMs) budgetMs = plan.maxTimeoutMs;
    if (capMs < budgetMs) budgetMs = capMs;
    this.budgetMs = budgetMs;
    const old = this.scope;
    this.scope = undefined;
    old?.dispose();
    // Created outside whatever deadline is ambient here (a former request's, on the parser's context).
    enterDeadline(undefined);
    if (budgetMs === Infinity || this.phase !== OPEN || this.released) return;
    const clock = plan.wheel.clock;
    holdReading(clock);
    let scope: DeadlineScope;
    try {
      // Kept alive: the open request holds the process anyway (see grpc's server-deadline-call.ts).
      scope = ownedDeadline(budgetMs, plan.wheel, this, true);
    } finally {
      releaseReading(clock);
    }
    if (this.context === undefined) this.context = captureContext(timeoutChannel);
    this.scope = scope;
    if (this.phase === OPEN) enterDeadline(scope);
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
    this.end('handler', this.budgetMs, this.plan.timeoutStatus, reason);
  }

  /**
   * A limit fired on the request (its deadline, or a connection's limit for it): answer or cut,
   * report, then abort the handler's signal.
   */
  end(kind: HttpTimeoutKind, limitMs: number, status: number, reason: unknown = limitReason(kind)): void {
    if (this.phase !== OPEN) return;
    this.phase = ENDED;
    const owner = this.owner;
    const outcome = this.answer(this, kind, status);
    publishTimeout(kind, limitMs, outcome, kind === 'handler' && this.propagated, this.context);
    owner.timedOut(this, kind, limitMs, outcome);
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
    const finished = this.res.writableFinished;
    const scope = this.scope;
    this.scope = undefined;
    records.delete(this.res);
    if (this.phase === OPEN) {
      this.phase = ENDED;
      if (finished) {
        scope?.dispose();
      } else if (scope !== undefined) {
        deadlineEnded(scope);
        scope.abort(clientGoneReason());
      }
    }
    this.owner.requestClosed(this, finished);
  }
}

/** The plain answer: on the socket or stream itself (timeout-answer.ts). */
export function answerOnWire(record: RequestDeadline, kind: HttpTimeoutKind, status: number): TimeoutEvent['outcome'] {
  return endTimedOut(record.req, record.res, status, kind);
}
