/**
 * heartbeat: the entry function and HeartbeatController, pings and idle detection for a ws server.
 * Must not depend on: another adapter, or state on the socket (per-connection state lives in a Map).
 *
 * # Heartbeat and idle detection for ws, one wheel handle per connection
 *
 * The ws README's heartbeat pings every socket from one `setInterval` and patches an `isAlive`
 * flag onto each. This module keeps, per connection, a small record in a `Map` (never on the
 * socket) and ONE handle on a timing wheel, armed for the earliest of:
 *
 * | what                 | due at                                       | then                           |
 * |----------------------|----------------------------------------------|--------------------------------|
 * | ping                 | lastReadAt + pingIntervalMs (+ slack)        | send a ping, await an answer   |
 * | pong deadline        | lastPingAt + pongTimeoutMs (while awaiting)  | terminate, emit `'dead'`       |
 * | reader / writer / all idle | last activity of that kind (or last event of that kind) + `<kind>IdleMs` | emit `'idle'` |
 *
 * Activity does not touch the wheel: a frame received (message, ping, pong) writes `lastReadAt`,
 * a completed `send()` writes `lastWriteAt`. When the handle fires, the record is compared with
 * the clock and the handle is re-armed for whatever is due next. The one exception is the pong
 * answering our ping: it moves the handle on to the next ping at once (an O(1) field write, as
 * the expiry only moves later), so an answered ping costs no second callback at its deadline. So a busy connection costs one
 * field write per frame and one timer callback per interval, is never pinged (it is not quiet)
 * and never killed (anything received after a ping answers it). This is the lazy scheme of
 * Netty's `IdleStateHandler`, on the shared wheel instead of one scheduled task per handler.
 *
 * Any frame received after a ping counts as the answer, not just the pong: a peer that is
 * talking is alive. Our own pings are not write activity (otherwise writer idleness could never
 * happen while pings run), nor are the pongs ws sends by itself in answer to the peer's pings.
 *
 * Closing a socket cancels its handle (O(1)) and forgets the record, so no timer outlives its
 * socket. Handles are unref'ed: an open socket keeps the process alive, a heartbeat never does.
 */
import { EventEmitter } from 'node:events';
import { describeValue } from '@tickwheel/core';
import type { Server as WebSocketServer, WebSocket } from 'ws';
import { publishTerminate } from './channels.js';
import { Connection, IdleMarks } from './connection.js';
import { resolveOptions, type ResolvedOptions } from './options.js';
import { SendTracker } from './send-tracker.js';
import type { HeartbeatEvents, HeartbeatOptions, HeartbeatStats, IdleKind, LivenessState } from './types.js';

/** WebSocket ready states (RFC 6455 / WHATWG), the same numbers ws uses. */
const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

/** A pong deadline checked this much past due was checked late, by our own loop's delay. */
const LATE_CHECK_MS = 2;

/** How often a handle that fires on a closing socket looks again, until the socket is closed. */
const CLOSING_RECHECK_MS = 1_000;

/**
 * The controller running on each server or socket. A second `heartbeat()` on the same target is
 * refused: two controllers would ping every connection twice.
 */
const running = new WeakMap<object, HeartbeatController<WebSocket>>();

/** One idle kind that came due in a check, kept until its event is emitted. */
interface DueIdle {
  kind: IdleKind;
  idleMs: number;
  first: boolean;
}

/**
 * Watches the connections of a `WebSocketServer`, or one `WebSocket`: pings quiet ones,
 * terminates those that do not answer, reports idleness. Create it with {@link heartbeat}.
 *
 * Events (typed, Node's `EventEmitter<T>`):
 * - `'dead'` ({@link DeadPeerEvent}): a ping went unanswered for `pongTimeoutMs`; the socket was terminated.
 * - `'idle'` ({@link IdleEvent}): a connection was idle for `readerIdleMs`/`writerIdleMs`/`allIdleMs`.
 *
 * @example
 * ```ts
 * const beat = heartbeat(wss, { pingIntervalMs: 15_000, pongTimeoutMs: 5_000 });
 * beat.on('dead', ({ socket, waitedMs }) => log.warn('peer gone', waitedMs));
 * beat.state(socket)?.rttMs;
 * beat.stop(); // detach; connections stay open
 * ```
 */
export class HeartbeatController<S extends WebSocket = WebSocket> extends EventEmitter<HeartbeatEvents<S>> {
  /** The options in effect, defaults applied. */
  readonly options: ResolvedOptions;
  private readonly connections = new Map<S, Connection<S>>();
  /** Client sockets handed over while still CONNECTING: attached on `'open'`. */
  private readonly opening = new Set<S>();
  private readonly server: WebSocketServer | undefined;
  private readonly target: object;
  private stopped = false;
  /** A re-attach of the server's hooks is queued (see `onServerListenerRemoved`). */
  private reattachQueued = false;
  private readonly counters = { pingsSent: 0, dead: 0, idle: 0 };
  // Listeners shared by every socket of this controller (ws calls them with the socket as `this`),
  // so attaching allocates no closures per connection for them.
  private readonly onRead: (this: WebSocket) => void;
  private readonly onPong: (this: WebSocket) => void;
  private readonly onClose: (this: WebSocket) => void;
  private readonly onOpen: (this: WebSocket) => void;
  private readonly onConnection: (socket: S) => void;
  private readonly onServerListenerRemoved: (event: string | symbol, listener: unknown) => void;

  /**
   * @param target - a `WebSocketServer` (with its own HTTP server, an external one, or `noServer`) or one `WebSocket`
   * @param options - see {@link HeartbeatOptions}
   * @throws TypeError/RangeError for a bad option or target, naming it and the value
   */
  constructor(target: WebSocketServer | S, options?: HeartbeatOptions) {
    super();
    this.options = resolveOptions(options);
    if (target !== null && typeof target === 'object' && running.has(target)) {
      throw new Error(
        'heartbeat() is already running on this target: use the controller it returned, or stop() it first',
      );
    }
    this.target = target;

    // ws calls these listeners with the socket as `this`, so the controller needs another name.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const controller = this;
    const connections = this.connections;
    const clock = this.options.wheel.clock;
    this.onRead = function (this: WebSocket): void {
      const c = connections.get(this as S);
      if (c === undefined) return;
      c.lastReadAt = clock.now();
      c.readSinceMark = true;
    };
    this.onPong = function (this: WebSocket): void {
      const c = connections.get(this as S);
      if (c === undefined) return;
      const now = clock.now();
      const answered = c.awaitingPong && c.lastReadAt < c.lastPingAt;
      c.lastReadAt = now;
      c.readSinceMark = true;
      if (!answered) return;
      c.rttUs = Math.round((now - c.lastPingAt) * 1_000);
      c.awaitingPong = false;
      // Move the handle from the pong deadline to whatever is due next. Later is only a field
      // write (lazy re-filing), and no callback runs at the old deadline.
      c.handle.refresh(delayUntil(controller.nextDueAt(c), now));
    };
    this.onClose = function (this: WebSocket): void {
      if (controller.opening.delete(this as S)) {
        this.removeListener('open', controller.onOpen);
        this.removeListener('close', controller.onClose);
        return;
      }
      const c = connections.get(this as S);
      if (c !== undefined) controller.detach(c);
    };
    this.onOpen = function (this: WebSocket): void {
      controller.opening.delete(this as S);
      this.removeListener('open', controller.onOpen);
      this.removeListener('close', controller.onClose);
      if (!controller.stopped) controller.attach(this as S);
    };
    this.onConnection = (socket: S): void => {
      this.add(socket);
    };
    // `wss.removeAllListeners('connection')` (say, to swap the app's handler) takes ours too: put
    // it back once the removal is over, and adopt whatever connected in between.
    this.onServerListenerRemoved = (_event, listener): void => {
      if (
        this.stopped ||
        this.reattachQueued ||
        (listener !== this.onConnection && listener !== this.onServerListenerRemoved)
      )
        return;
      this.reattachQueued = true;
      process.nextTick(() => this.reattachServerHooks());
    };

    if (isServer(target)) {
      this.server = target;
      target.on('connection', this.onConnection as (socket: WebSocket) => void);
      target.on('removeListener', this.onServerListenerRemoved);
      if (target.clients !== undefined) for (const socket of target.clients) this.add(socket as S);
    } else if (isSocket(target)) {
      this.server = undefined;
      this.add(target);
    } else {
      throw new TypeError(`heartbeat() needs a ws WebSocketServer or WebSocket, got ${describeValue(target)}`);
    }
    running.set(target, this as unknown as HeartbeatController<WebSocket>);
  }

  /** Connections being watched. */
  get size(): number {
    return this.connections.size;
  }

  /** True after {@link HeartbeatController.stop}. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Starts watching one more socket. Server connections are picked up by themselves through the
   * server's `'connection'` event; call this when you accept sockets without emitting it (a
   * `noServer` setup whose `handleUpgrade` callback does not `emit('connection')`). A socket
   * still CONNECTING is watched from its `'open'`; a closing or closed one is ignored.
   * Adding a watched socket again does nothing.
   *
   * @throws Error after `stop()`; TypeError when `socket` is not a ws WebSocket
   */
  add(socket: S): void {
    if (this.stopped) throw new Error('heartbeat is stopped: create a new one with heartbeat()');
    if (!isSocket(socket)) throw new TypeError(`add() needs a ws WebSocket, got ${describeValue(socket)}`);
    if (this.connections.has(socket) || this.opening.has(socket)) return;
    if (socket.readyState === CONNECTING) {
      this.opening.add(socket);
      socket.on('open', this.onOpen);
      socket.on('close', this.onClose);
      return;
    }
    if (socket.readyState === OPEN) this.attach(socket);
  }

  /**
   * Stops watching one socket and leaves it open: its handle is cancelled, its listeners removed
   * and `send` restored.
   *
   * @returns true if it was watched
   */
  remove(socket: S): boolean {
    if (this.opening.delete(socket)) {
      socket.removeListener('open', this.onOpen);
      socket.removeListener('close', this.onClose);
      return true;
    }
    const c = this.connections.get(socket);
    if (c === undefined) return false;
    this.detach(c);
    return true;
  }

  /**
   * The liveness of one socket, as a snapshot, or undefined when it is not watched (never was,
   * closed, removed, or declared dead).
   */
  state(socket: S): LivenessState | undefined {
    return this.connections.get(socket)?.snapshot();
  }

  /** Counters of this controller's life. */
  stats(): HeartbeatStats {
    return { connections: this.connections.size, ...this.counters };
  }

  /**
   * Detaches everything: stops listening for new connections, cancels every handle, removes
   * every listener and restores `send`. Connections stay open. Idempotent.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (running.get(this.target) === (this as unknown)) running.delete(this.target);
    this.server?.removeListener('removeListener', this.onServerListenerRemoved);
    this.server?.removeListener('connection', this.onConnection as (socket: WebSocket) => void);
    for (const socket of this.opening) {
      socket.removeListener('open', this.onOpen);
      socket.removeListener('close', this.onClose);
    }
    this.opening.clear();
    for (const c of this.connections.values()) this.detach(c);
  }

  /** Same as {@link HeartbeatController.stop}, for `using beat = heartbeat(wss)`. */
  [Symbol.dispose](): void {
    this.stop();
  }

  private attach(socket: S): void {
    const { wheel, trackWrites } = this.options;
    const clock = wheel.clock;
    const now = clock.now();
    const c = new Connection(socket, now);
    const o = this.options;
    if (o.readerIdleMs > 0 || o.writerIdleMs > 0 || o.allIdleMs > 0) c.idle = new IdleMarks();
    // Pings only need to know that something arrived, which the byte counter tells when the handle
    // fires: no listener runs per message. Reader idleness needs the exact time of each read.
    c.listensReads = o.readerIdleMs > 0 || o.allIdleMs > 0 || c.readMark < 0;
    if (trackWrites) {
      c.sendTracker = new SendTracker(socket, (err) => {
        if (err == null) c.lastWriteAt = clock.now();
      });
    }
    if (c.listensReads) {
      socket.on('message', this.onRead);
      socket.on('ping', this.onRead);
    }
    socket.on('pong', this.onPong);
    socket.on('close', this.onClose);
    this.connections.set(socket, c);
    // Unref'ed: the socket keeps the process alive while it is open; the heartbeat never should.
    c.handle = wheel.schedule(delayUntil(this.nextDueAt(c), now), () => this.check(c)).unref();
  }

  private detach(c: Connection<S>): void {
    const socket = c.socket;
    this.connections.delete(socket);
    c.handle.cancel();
    c.sendTracker?.restore();
    socket.removeListener('message', this.onRead);
    socket.removeListener('ping', this.onRead);
    socket.removeListener('pong', this.onPong);
    socket.removeListener('close', this.onClose);
  }

  /** The earliest time anything is due on this connection; Infinity when nothing ever is. */
  private nextDueAt(c: Connection<S>): number {
    const o = this.options;
    let due = Infinity;
    if (o.pingIntervalMs > 0) {
      if (c.awaitingPong) {
        due = c.lastPingAt + o.pongTimeoutMs;
      } else {
        due = c.lastReadAt + o.pingIntervalMs;
        // Round up to the slack grid, so that pings due close together share one wheel pass.
        if (o.pingSlackMs > 0) due = Math.max(due, Math.ceil(due / o.pingSlackMs) * o.pingSlackMs);
      }
    }
    const marks = c.idle;
    if (marks === undefined) return due;
    if (o.readerIdleMs > 0) due = Math.min(due, Math.max(c.lastReadAt, marks.reader) + o.readerIdleMs);
    if (o.writerIdleMs > 0) due = Math.min(due, Math.max(c.lastWriteAt, marks.writer) + o.writerIdleMs);
    if (o.allIdleMs > 0) due = Math.min(due, Math.max(c.lastReadAt, c.lastWriteAt, marks.all) + o.allIdleMs);
    return due;
  }

  /** The wheel callback: compare the record with the clock, act, re-arm for the next due time. */
  private check(c: Connection<S>): void {
    const socket = c.socket;
    const o = this.options;
    const readyState = socket.readyState;
    if (readyState !== OPEN) {
      // Closing: its 'close' event detaches it, unless someone removed our listener; then this does.
      if (readyState === CLOSED) this.detach(c);
      else c.handle.refresh(CLOSING_RECHECK_MS);
      return;
    }
    const now = o.wheel.clock.now();
    c.noticeReads(now);

    if (c.awaitingPong) {
      if (c.lastReadAt >= c.lastPingAt)
        c.awaitingPong = false; // answered
      else if (now >= c.lastPingAt + o.pongTimeoutMs) {
        // Checked late (our own loop was busy): the answer may be waiting in the kernel. Let one
        // I/O poll read it first; on time, nothing is waiting that a poll would read.
        if (now > c.lastPingAt + o.pongTimeoutMs + LATE_CHECK_MS && !c.killPending) return this.killAfterPoll(c);
        return this.kill(c, now);
      }
    }

    let due: DueIdle[] | undefined;
    const marks = c.idle;
    if (marks !== undefined) {
      if (o.readerIdleMs > 0 && now >= Math.max(c.lastReadAt, marks.reader) + o.readerIdleMs) {
        (due ??= []).push({ kind: 'reader', idleMs: now - c.lastReadAt, first: marks.reader <= c.lastReadAt });
        marks.reader = now;
      }
      if (o.writerIdleMs > 0 && now >= Math.max(c.lastWriteAt, marks.writer) + o.writerIdleMs) {
        (due ??= []).push({ kind: 'writer', idleMs: now - c.lastWriteAt, first: marks.writer <= c.lastWriteAt });
        marks.writer = now;
      }
      const lastActivity = Math.max(c.lastReadAt, c.lastWriteAt);
      if (o.allIdleMs > 0 && now >= Math.max(lastActivity, marks.all) + o.allIdleMs) {
        (due ??= []).push({ kind: 'all', idleMs: now - lastActivity, first: marks.all <= lastActivity });
        marks.all = now;
      }
    }
    const closing = due !== undefined && o.closeOnIdle;

    if (!closing && o.pingIntervalMs > 0 && !c.awaitingPong && now >= c.lastReadAt + o.pingIntervalMs) {
      c.awaitingPong = true;
      c.lastPingAt = now;
      c.pingsSent++;
      this.counters.pingsSent++;
      socket.ping();
    }

    // Re-arm before any listener runs, so a throwing listener cannot leave the connection unwatched.
    if (closing) c.handle.cancel();
    else c.handle.refresh(delayUntil(this.nextDueAt(c), now));
    if (due === undefined) return;
    if (closing) {
      const idle = due[0];
      publishTerminate(
        `idle-${idle.kind}`,
        idle.idleMs,
        o[`${idle.kind}IdleMs`],
        socket,
        this.server === undefined ? 'client' : 'server',
      );
    }

    for (const idle of due) {
      if (this.connections.get(socket) !== c) return; // a listener removed it or stopped us
      this.counters.idle++;
      this.emit('idle', {
        reason: 'idle',
        kind: idle.kind,
        socket,
        idleMs: idle.idleMs,
        first: idle.first,
        closing,
        state: c.snapshot(),
      });
    }
    if (closing && socket.readyState === OPEN) socket.close(o.idleCloseCode, o.idleCloseReason);
  }

  /** Puts back the server hooks a `removeAllListeners()` took, and adopts the connections it missed. */
  private reattachServerHooks(): void {
    this.reattachQueued = false;
    const server = this.server;
    if (this.stopped || server === undefined) return;
    const onConnection = this.onConnection as (socket: WebSocket) => void;
    if (server.listenerCount('connection', onConnection) === 0) server.on('connection', onConnection);
    if (server.listenerCount('removeListener', this.onServerListenerRemoved) === 0)
      server.on('removeListener', this.onServerListenerRemoved);
    if (server.clients !== undefined) for (const socket of server.clients) this.add(socket as S);
  }

  /** Checks `c` again right after the next I/O poll (`setImmediate` runs after the poll phase). */
  private killAfterPoll(c: Connection<S>): void {
    c.killPending = true;
    setImmediate(() => {
      // Still pending while it runs: a check that finds it unanswered now terminates it.
      if (this.connections.get(c.socket) === c) this.check(c);
      c.killPending = false;
    });
  }

  /** No answer in time: best-effort close frame, destroy the socket, report. */
  private kill(c: Connection<S>, now: number): void {
    const socket = c.socket;
    const state = c.snapshot();
    this.detach(c);
    this.counters.dead++;
    // The peer may only be stalled (a paused reader): the close frame tells it why, if it ever reads again.
    socket.close(this.options.closeCode, this.options.closeReason);
    socket.terminate();
    publishTerminate(
      'pong-timeout',
      now - c.lastPingAt,
      this.options.pongTimeoutMs,
      socket,
      this.server === undefined ? 'client' : 'server',
    );
    this.emit('dead', { reason: 'dead', socket, state, waitedMs: now - c.lastPingAt });
  }
}

/**
 * Starts a heartbeat on a ws `WebSocketServer` (every connection it accepts, now and later) or
 * on one `WebSocket` (a client watching its server). Quiet connections are pinged after
 * `pingIntervalMs`; one that answers nothing within `pongTimeoutMs` is terminated and reported
 * with `'dead'`. Optional Netty-style reader/writer/all idle events. One wheel handle per
 * connection, on the shared wheel unless `wheel` is given.
 *
 * @param target - the server, or one socket
 * @param options - see {@link HeartbeatOptions}; defaults in the README
 * @returns the controller: typed events, `state(socket)`, `add()`, `remove()`, `stats()`, `stop()`
 * @throws TypeError/RangeError for a bad option or target
 * @example
 * ```ts
 * import { WebSocketServer } from 'ws';
 * import { heartbeat } from '@tickwheel/ws';
 *
 * const wss = new WebSocketServer({ port: 8080 });
 * const beat = heartbeat(wss, { pingIntervalMs: 30_000, pongTimeoutMs: 10_000 });
 * beat.on('dead', ({ socket, state }) => console.log('dead peer, last read at', state.lastReadAt));
 * ```
 */
export function heartbeat<T extends typeof WebSocket>(
  server: WebSocketServer<T>,
  options?: HeartbeatOptions,
): HeartbeatController<InstanceType<T>>;
export function heartbeat<S extends WebSocket>(socket: S, options?: HeartbeatOptions): HeartbeatController<S>;
export function heartbeat(
  target: WebSocketServer | WebSocket,
  options?: HeartbeatOptions,
): HeartbeatController<WebSocket> {
  return new HeartbeatController<WebSocket>(target, options);
}

/**
 * The delay from `now` to `due`, in whole ms rounded up (never early). Whole: the handle keeps its
 * delay for `refresh()`, and a fractional one would be a boxed double per connection.
 */
function delayUntil(due: number, now: number): number {
  return due > now ? Math.ceil(due - now) : 0;
}

function isServer(value: unknown): value is WebSocketServer {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as WebSocketServer).handleUpgrade === 'function' &&
    typeof (value as WebSocketServer).on === 'function'
  );
}

function isSocket(value: unknown): value is WebSocket {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as WebSocket).ping === 'function' &&
    typeof (value as WebSocket).terminate === 'function' &&
    typeof (value as WebSocket).readyState === 'number'
  );
}
