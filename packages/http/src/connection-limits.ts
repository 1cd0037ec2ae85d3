/**
 * One HTTP/1.x connection's limits on one wheel handle: the request head, the request body's silence, and keep-alive idleness.
 *
 * A connection moves through phases, and its single timer means what the phase says:
 *
 * - HEADERS: a request head is on its way; it must be complete `headersMs` after the connection
 *   started (or after the next request's first bytes were seen on a keep-alive connection).
 *   Then Node's own 408 answer and the connection is closed.
 * - BODY: the handler runs and the request body is still coming. The timer polls the socket's
 *   byte counter every quarter of `bodyIdleMs`: bytes moved, the count starts over; none, and
 *   the handler is reading (the request flows or has a 'readable' listener, its buffer not
 *   full), one more silent quarter. Four silent quarters in a row end the request (408, or a cut
 *   when its response had started), so silence is cut between `bodyIdleMs` and 1.25x it, and
 *   time the handler spends not reading never counts. Nothing listens to the request's data
 *   (a 'data' listener would switch the stream to flowing and read the body for the handler).
 * - ACTIVE: the handlers run with the body in; no connection limit (the handler deadline is the request's).
 * - IDLE: no request in flight on a keep-alive connection. `keepAliveMs` after the last response
 *   closed, the connection is closed if no byte came in meanwhile. When bytes came, the next
 *   head is coming: HEADERS, timed from then. With `keepAliveMs` off and `headersMs` on, the
 *   timer looks for the next head's first bytes every `headersMs`.
 *
 * node:http's parser consumes the socket in C++, so JavaScript sees no 'data' event: the byte
 * counter (`socket.bytesRead`) is how incoming bytes are seen, read only when the timer fires.
 * The connection record lives in a WeakMap keyed by the socket: nothing is added to the socket.
 */
import type { Socket } from 'node:net';
import type { TimerHandle } from '@tickwheel/core';
import { scheduleTask, type TimerTask } from '@tickwheel/core/internal';
import { reportTimeout, type TimeoutListener } from './channels.js';
import { speaksHttp } from './http-internals.js';
import type { ServerPlan } from './options.js';
import type { RequestDeadline } from './request-deadline.js';
import { answerOnSocket, REQUEST_TIMEOUT_ANSWER } from './timeout-answer.js';
import type { TimeoutEvent } from './types.js';

/** Who a connection reports to: serverTimeouts' controller. */
export interface ConnectionOwner extends TimeoutListener {
  readonly plan: ServerPlan;
  /** True once `close()` began: a connection that falls idle is closed at once. */
  readonly draining: boolean;
  connectionClosed(connection: ConnectionLimits): void;
}

const HEADERS = 0;
const BODY = 1;
const ACTIVE = 2;
const IDLE = 3;
const CLOSED = 4;

/** How many silent polls of the body make `bodyIdleMs`. */
const BODY_POLLS = 4;

const connections = new WeakMap<Socket, ConnectionLimits>();

/** The limits of `socket`, if serverTimeouts watches it. */
export function connectionOf(socket: Socket | null): ConnectionLimits | undefined {
  return socket === null ? undefined : connections.get(socket);
}

/** The socket's 'close' listener, one function for every connection. */
function onSocketClose(this: Socket): void {
  connections.get(this)?.forget();
}

/** True while the handler is taking the body in: the request flows or is read, and its buffer has room. */
function handlerReads(req: RequestDeadline['req']): boolean {
  return (
    (req.readableFlowing === true || req.listenerCount('readable') > 0) &&
    req.readableLength < req.readableHighWaterMark
  );
}

/** One connection's phase and timer (see the file's comment). */
export class ConnectionLimits implements TimerTask {
  /** Requests whose response has not closed yet (more than one when pipelined). */
  inFlight = 0;
  private phase = HEADERS;
  private timer: TimerHandle | undefined = undefined;
  /** The byte counter when the timer last looked. */
  private seenBytes = 0;
  private silentPolls = 0;
  /** The request whose body BODY watches. */
  private bodyRecord: RequestDeadline | undefined = undefined;

  constructor(
    readonly owner: ConnectionOwner,
    readonly socket: Socket,
  ) {
    connections.set(socket, this);
    socket.on('close', onSocketClose);
    const headersMs = owner.plan.headersMs;
    if (headersMs !== Infinity) this.arm(headersMs);
  }

  /** A request head arrived: the head's limit is met; watch its body if it has one coming. */
  requestStarted(record: RequestDeadline): void {
    if (this.phase === CLOSED) return;
    this.inFlight++;
    const bodyIdleMs = this.owner.plan.bodyIdleMs;
    if (bodyIdleMs !== Infinity && !record.req.complete) {
      this.phase = BODY;
      this.bodyRecord = record;
      this.seenBytes = this.socket.bytesRead;
      this.silentPolls = 0;
      this.arm(Math.ceil(bodyIdleMs / BODY_POLLS));
    } else {
      this.phase = ACTIVE;
      this.timer?.cancel();
    }
  }

  /** A response closed: with none left in flight, the connection is idle until the next head. */
  requestClosed(record: RequestDeadline): void {
    if (this.bodyRecord === record) this.bodyRecord = undefined;
    if (--this.inFlight > 0 || this.phase === CLOSED) return;
    const socket = this.socket;
    if (socket.destroyed || !socket.writable || !speaksHttp(socket)) return;
    if (this.owner.draining) {
      socket.destroy();
      return;
    }
    this.phase = IDLE;
    this.seenBytes = socket.bytesRead;
    const plan = this.owner.plan;
    if (plan.keepAliveMs !== Infinity) this.arm(plan.keepAliveMs);
    else if (plan.headersMs !== Infinity) this.arm(plan.headersMs);
    else this.timer?.cancel();
  }

  /** True while no request is in flight: what `close()` destroys at once. */
  get idle(): boolean {
    return this.inFlight === 0;
  }

  /** The socket closed, or serverTimeouts stopped: let go of it. */
  forget(): void {
    if (this.phase === CLOSED) return;
    this.phase = CLOSED;
    this.timer?.cancel();
    this.timer = undefined;
    this.bodyRecord = undefined;
    connections.delete(this.socket);
    this.owner.connectionClosed(this);
  }

  /** serverTimeouts stopped: no limit any more; the record stays until the socket closes (its owner waits for that). */
  detach(): void {
    this.phase = ACTIVE;
    this.timer?.cancel();
    this.bodyRecord = undefined;
  }

  /** @internal The wheel's call: the phase's limit is due. */
  timerFired(): void {
    const socket = this.socket;
    if (socket.destroyed || !speaksHttp(socket)) {
      // Closed, upgraded (a WebSocket) or turned into a CONNECT tunnel: none of our business now.
      this.forget();
      return;
    }
    const plan = this.owner.plan;
    switch (this.phase) {
      case HEADERS:
        this.close('headers', plan.headersMs);
        return;
      case BODY:
        this.pollBody(plan.bodyIdleMs);
        return;
      case IDLE: {
        const bytes = socket.bytesRead;
        if (bytes === this.seenBytes) {
          if (plan.keepAliveMs !== Infinity) this.close('keep-alive', plan.keepAliveMs);
          else this.timer!.refresh();
          return;
        }
        // The next request's head is on its way.
        this.seenBytes = bytes;
        if (plan.headersMs !== Infinity) {
          this.phase = HEADERS;
          this.arm(plan.headersMs);
        } else {
          this.timer!.refresh();
        }
        return;
      }
    }
  }

  private pollBody(bodyIdleMs: number): void {
    const record = this.bodyRecord;
    if (record === undefined || record.req.complete || !record.open) {
      this.phase = ACTIVE;
      this.bodyRecord = undefined;
      return;
    }
    const bytes = this.socket.bytesRead;
    if (bytes !== this.seenBytes) {
      this.seenBytes = bytes;
      this.silentPolls = 0;
    } else if (!handlerReads(record.req)) {
      this.silentPolls = 0;
    } else if (++this.silentPolls >= BODY_POLLS) {
      this.phase = ACTIVE;
      this.bodyRecord = undefined;
      record.end('body-idle', bodyIdleMs, 408);
      return;
    }
    this.timer!.refresh();
  }

  /** The head or keep-alive limit fired: Node's 408 for a head that is late, a plain close for an idle connection. */
  private close(kind: 'headers' | 'keep-alive', limitMs: number): void {
    const socket = this.socket;
    let outcome: TimeoutEvent['outcome'] = 'closed';
    if (kind === 'headers') {
      answerOnSocket(socket, REQUEST_TIMEOUT_ANSWER);
      outcome = 'answered';
    } else {
      socket.destroy();
    }
    this.forget();
    reportTimeout(this.owner, kind, limitMs, outcome, undefined, false, undefined);
  }

  private arm(delayMs: number): void {
    if (this.timer === undefined) {
      // Ref'ed: the open socket holds the process anyway (see core's ownedDeadline on keep-alive).
      this.timer = scheduleTask(this.owner.plan.wheel, delayMs, this);
    } else {
      this.timer.refresh(delayMs);
    }
  }
}
