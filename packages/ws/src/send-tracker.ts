/**
 * SendTracker: observes completed `send()` calls on one socket, as write activity.
 * Must not depend on: the timers or the wheel (ws's types only).
 */
import type { WebSocket } from 'ws';

/** `WebSocket#send` with every overload folded into one signature. */
type SendFunction = (this: WebSocket, data: unknown, options?: unknown, cb?: (err?: Error) => void) => void;

/**
 * Observes completed `send()` calls on one socket, as write activity.
 *
 * ws reports a send as complete only through the callback of `send()`, and it has no event for
 * it, so observing completions means passing our own callback. This is done by shadowing `send`
 * with an own property of the socket that calls the original with a callback reporting to
 * `onWritten` and then to the caller's callback, if any. Nothing else changes: arguments,
 * return value, errors and the prototype are untouched.
 *
 * `restore()` undoes it: it deletes the own property (or puts back an own `send` that was
 * there before). If someone else has since wrapped `send` on top of ours, deleting would drop
 * their wrapper too, so ours is left in place as a pure pass-through instead.
 */
export class SendTracker {
  private active = true;
  private readonly hadOwnSend: boolean;
  private readonly original: SendFunction;
  private readonly wrapper: SendFunction;

  /**
   * @param socket - the socket to observe
   * @param onWritten - called once per completed send, with the error when it failed
   */
  constructor(
    private readonly socket: WebSocket,
    onWritten: (err?: Error) => void,
  ) {
    this.hadOwnSend = Object.prototype.hasOwnProperty.call(socket, 'send');
    // eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with `.call(socket)`
    const original = socket.send as SendFunction;
    this.original = original;
    const isActive = (): boolean => this.active;
    this.wrapper = function send(this: WebSocket, data: unknown, options?: unknown, cb?: (err?: Error) => void): void {
      if (!isActive()) return original.call(this, data, options, cb);
      if (typeof options === 'function') {
        cb = options as (err?: Error) => void;
        options = undefined;
      }
      const callback = cb;
      const done =
        callback === undefined
          ? onWritten
          : (err?: Error) => {
              onWritten(err);
              callback(err);
            };
      return original.call(this, data, options, done);
    };
    (socket as { send: SendFunction }).send = this.wrapper;
  }

  /** Stops observing and puts `send` back as it was. Idempotent. */
  restore(): void {
    if (!this.active) return;
    this.active = false;
    const socket = this.socket as { send: SendFunction };
    if (socket.send !== this.wrapper) return;
    if (this.hadOwnSend) socket.send = this.original;
    else delete (socket as { send?: SendFunction }).send;
  }
}
