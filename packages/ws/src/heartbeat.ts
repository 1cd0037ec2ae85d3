/**
 * heartbeat: the entry function and HeartbeatController, pings and idle detection for a ws server or socket.
 *
 * # Heartbeat and idle detection for ws, on the shared timing wheel
 *
 * The ws README's heartbeat pings every socket from one `setInterval` and patches an `isAlive`
 * flag onto each. This module keeps, per connection, a small record in a hidden slot on the
 * socket (a private class field: no user code sees it, see socket-record.ts), filed in a
 * {@link DueSchedule} under the earliest of:
 *
 * | what                 | due at                                       | then                           |
 * |----------------------|----------------------------------------------|--------------------------------|
 * | ping                 | lastReadAt + pingIntervalMs (+ slack)        | send a ping, await an answer   |
 * | pong deadline        | lastPingAt + pongTimeoutMs (while awaiting)  | terminate, emit `'dead'`       |
 * | reader / writer / all idle | last activity of that kind (or last event of that kind) + `<kind>IdleMs` | emit `'idle'` |
 * | keepalive            | lastWriteAt + keepaliveMs                    | send `keepaliveMessage`        |
 *
 * The schedule gives each due time ONE wheel handle, shared by every record due then: pings are
 * rounded up to the `pingSlackMs` grid, and the pings of one pass get their deadlines within a
 * millisecond or two, so thousands of connections cost a few dozen handles, and a record costs
 * no handle and no closure of its own.
 *
 * Activity does not touch the schedule: a frame received (message, ping, pong) writes `lastReadAt`,
 * or moves the transport's `bytesRead`; a `send()` moves its `bytesWritten`, which is sampled
 * when the record comes due (nothing is patched onto the socket). When a record comes due it is compared with the
 * clock, acted on, and filed again under whatever is due next. The one exception is the pong
 * answering our ping: it files the record under its next ping at once, so an answered ping
 * costs nothing at its deadline (and a deadline whose pings were all answered never wakes the
 * wheel). So a busy connection costs nothing per frame and two visits per interval (a talking
 * record is looked at every half interval, so that `lastReadAt` never runs ahead of the peer's
 * last frame: see connection.ts), is never pinged (it is not quiet) and never killed (anything
 * received after a ping answers it). A peer that falls silent is declared dead within
 * `pingIntervalMs + pongTimeoutMs` of its last frame, plus the slack and a tick.
 * This is the lazy scheme of Netty's `IdleStateHandler`, on the shared wheel instead of one
 * scheduled task per handler.
 *
 * Any frame received after a ping counts as the answer, not just the pong: a peer that is
 * talking is alive. Our own pings are not write activity (otherwise writer idleness could never
 * happen while pings run), nor are the pongs ws sends by itself in answer to the peer's pings.
 *
 * Closing a socket unfiles its record (O(1); the due time's handle is cancelled when it was the
 * last one) and forgets it, so no timer outlives its socket: the heartbeat hears it from ws's
 * frame reader, not from a listener of its own among the socket's `'close'` listeners
 * (close-watch.ts). Handles are unref'ed: an open
 * socket keeps the process alive, a heartbeat never does.
 *
 * The controller keeps no collection of its records: a socket's own slot leads to its record
 * (the listeners, `state()`, `add()`, `remove()`), the schedule's rings lead to all of them
 * (`stop()`), and a counter is `size`: a `Map<socket, record>` cost more heap per connection
 * than the record itself saves (benchmarks/README.md). A socket has one slot:
 * a second heartbeat watching the same socket (say one on the server, one on that socket, or
 * `add()` on two) finds it taken and keeps its record in a map of its own, created then; a
 * record knows its heartbeat through its `lastPing` (see `PingPass` in connection.ts).
 */
// Disposable and Symbol.dispose, stated here for consumers whose lib and types lack them (TypeScript 7 defaults to no @types).
/// <reference lib="esnext.disposable" preserve="true" />
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import { EventEmitter } from 'node:events';
import { freshNow } from '@tickwheel/core';
import { describeValue } from '@tickwheel/core/internal';
import type { Server as WebSocketServer, WebSocket } from 'ws';
import { CloseWatch } from './close-watch.js';
import { Connection, MarkedConnection } from './connection.js';
import type { DueSchedule } from './due-schedule.js';
import { controlFrameBytes, receivedControlFrameBytes } from './frame-size.js';
import { startLimits } from './limits.js';
import { LivenessCheck, type CheckHost } from './liveness-check.js';
import { PollReading } from './poll-reading.js';
import { PresenceLink } from './presence-link.js';
import { resolveOptions, type ResolvedOptions } from './options.js';
import { setSocketRecord, socketRecord } from './socket-record.js';
import { isServer, isSocket, SocketIntake } from './socket-intake.js';
import type { HeartbeatEvents, HeartbeatOptions, HeartbeatStats, LivenessState } from './types.js';
import { answersPings } from './ws-internals.js';

/**
 * The controller running on each server or socket. A second `heartbeat()` on the same target is
 * refused: two controllers would ping every connection twice.
 */
const running = new WeakMap<object, HeartbeatController<WebSocket>>();

/**
 * Watches the connections of a `WebSocketServer`, or one `WebSocket`: pings quiet ones,
 * terminates those that do not answer, reports idleness. Create it with {@link heartbeat}.
 *
 * Events (typed, Node's `EventEmitter<T>`):
 * - `'dead'` ({@link DeadPeerEvent}): a ping went unanswered for `pongTimeoutMs`; the socket was terminated.
 * - `'idle'` ({@link IdleEvent}): a connection was idle for `readerIdleMs`/`writerIdleMs`/`allIdleMs`.
 * - `'limit'` ({@link LimitEvent}): a connection reached `firstMessageMs`, `maxLifetimeMs` or
 *   `maxBufferedBytes` for `drainTimeoutMs`, and is being closed (terminated for the last).
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
  /** Watched connections (see {@link HeartbeatController.size}). */
  private watching = 0;
  /**
   * Records of sockets whose slot another heartbeat has (or that take no private field):
   * created on the first such socket, usually never (see the module comment).
   */
  private spare: Map<S, Connection<S>> | undefined = undefined;
  private readonly schedule: DueSchedule<Connection<S>>;
  private readonly intake: SocketIntake<S>;
  private readonly target: object;
  private readonly liveness: LivenessCheck<S>;
  private stopped = false;
  // Listeners shared by every socket of this controller (ws calls them with the socket as `this`),
  // so attaching allocates no closures per connection for them.
  private readonly onRead: (this: WebSocket) => void;
  private readonly onPong: (this: WebSocket, data: Buffer) => void;
  /** With `firstMessageMs`: the first data message ends the wait (and this listener). */
  private readonly onFirstMessage: (this: WebSocket) => void;
  /** With writes observed: a peer's ping, whose automatic pong is our frame, not a write (and a read). */
  private readonly onPeerPing: (this: WebSocket, data: Buffer) => void;
  /** Hears each watched socket close, without a listener in its `'close'` list (see close-watch.ts). */
  private readonly closeWatch: CloseWatch;
  /** With `presence`: joins accepted connections, leaves them on detach. */
  private readonly presence: PresenceLink<S> | undefined;

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
    const o = this.options;
    const clock = o.wheel.clock;
    const client = !isServer(target);
    this.liveness = new LivenessCheck<S>(o, this.checkHost(), client ? 'client' : 'server');
    // The check runs what comes due in the schedule it owns.
    const schedule = this.liveness.schedule;
    this.schedule = schedule;
    // Fresh readings: a read is a job of its own, and `clock.now()` would queue a microtask to
    // end its cached reading, for every frame.
    const liveness = this.liveness;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const controller = this;
    this.onRead = function (this: WebSocket): void {
      controller.recordOf(this as S)?.read(freshNow(clock));
    };
    this.onFirstMessage = function (this: WebSocket): void {
      const c = controller.recordOf(this as S);
      if (c !== undefined) controller.endFirstMessageWait(c);
    };
    this.onPeerPing = function (this: WebSocket, data: Buffer): void {
      const c = controller.recordOf(this as S);
      if (c === undefined) return;
      c.read(freshNow(clock));
      // ws answers by itself unless told not to (`autoPong: false`).
      if (c.extra !== undefined && answersPings(this)) c.extra.ownBytes += controlFrameBytes(this, data.length, client);
    };
    // A pong read after a deadline proves a poll ran since (see liveness-check.ts): the poll's
    // end, not its shared reading, is when.
    const pongReading = new PollReading(clock, (at) => {
      if (at > liveness.lastPongReadAt) liveness.lastPongReadAt = at;
    });
    this.onPong = function (this: WebSocket, data: Buffer): void {
      const c = controller.recordOf(this as S);
      if (c === undefined) return;
      // The pongs of one I/O poll share its clock reading (see poll-reading.ts).
      const now = pongReading.at(c.pingsSent === 0 ? -Infinity : c.lastPing.sentAt);
      // An answer files the record under its next ping at once: nothing runs at the deadline.
      if (c.pong(now, receivedControlFrameBytes(this, data.length, client)) && !c.killPending)
        schedule.file(c, c.dueAt(o));
    };
    this.closeWatch = new CloseWatch((socket) => {
      const c = this.recordOf(socket as S);
      if (c !== undefined) this.detach(c);
    });
    const presence = this.options.presence;
    if (presence !== undefined && !isServer(target))
      throw new TypeError(
        '@tickwheel/ws: presence needs a WebSocketServer: a connection is joined with its upgrade request',
      );
    this.presence = presence && new PresenceLink<S>(presence.tracker, presence.memberOf);
    this.intake = new SocketIntake<S>(
      target,
      (socket) => this.attach(socket),
      this.presence &&
        ((socket, request) => {
          if (this.recordOf(socket) !== undefined) this.presence!.admitted(socket, request);
        }),
    );
    running.set(target, this as unknown as HeartbeatController<WebSocket>);
  }

  /** Connections being watched. */
  get size(): number {
    return this.watching;
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
    if (this.recordOf(socket) === undefined) this.intake.add(socket);
  }

  /**
   * Stops watching one socket and leaves it open: its record is unfiled, its listeners removed
   * (nothing else was ever put on it).
   *
   * @returns true if it was watched
   */
  remove(socket: S): boolean {
    if (this.intake.forget(socket)) return true;
    const c = this.recordOf(socket);
    if (c === undefined) return false;
    this.detach(c);
    return true;
  }

  /**
   * The liveness of one socket, as a snapshot, or undefined when it is not watched (never was,
   * closed, removed, or declared dead).
   */
  state(socket: S): LivenessState | undefined {
    return this.recordOf(socket)?.snapshot();
  }

  /**
   * Ends the `firstMessageMs` wait of `socket` early (say, once it authenticated by other means):
   * the limit never touches it afterwards. Does nothing for a socket that is not watched.
   *
   * @returns true if the socket was waiting
   */
  admit(socket: S): boolean {
    const c = this.recordOf(socket);
    if (c === undefined || c.extra === undefined || c.extra.firstMessageBy === Infinity) return false;
    this.endFirstMessageWait(c);
    return true;
  }

  /** Counters of this controller's life. */
  stats(): HeartbeatStats {
    return { connections: this.watching, ...this.liveness.counters };
  }

  /**
   * Detaches everything: stops listening for new connections, cancels every handle, removes
   * every listener. Connections stay open. Idempotent.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (running.get(this.target) === (this as unknown)) running.delete(this.target);
    this.intake.stop();
    for (const c of this.schedule.entries(...this.liveness.heldRings)) this.detach(c);
    this.schedule.clear();
  }

  /** Same as {@link HeartbeatController.stop}, for `using beat = heartbeat(wss)`. */
  [Symbol.dispose](): void {
    this.stop();
  }

  private checkHost(): CheckHost<S> {
    return {
      detach: (c) => this.detach(c),
      events: this,
    };
  }

  /** This controller's record of `socket`, from the socket's slot or the spare map; undefined when it watches none. */
  private recordOf(socket: S): Connection<S> | undefined {
    const c = socketRecord<Connection<S>>(socket);
    if (c !== undefined && c.owner === this.liveness) return c;
    return this.spare?.get(socket);
  }

  /** The first message came (or `admit()`): its deadline is gone; the record is refiled lazily. */
  private endFirstMessageWait(c: Connection<S>): void {
    c.extra!.firstMessageBy = Infinity;
    c.socket.removeListener('message', this.onFirstMessage);
  }

  /** The one place a connection is admitted: every watched socket comes through here once. */
  private attach(socket: S): void {
    if (this.stopped || this.recordOf(socket) !== undefined) return;
    const o = this.options;
    const clock = o.wheel.clock;
    const now = clock.now();
    const limited = o.firstMessageMs < Infinity || o.maxLifetimeMs < Infinity || o.maxBufferedBytes < Infinity;
    const marked = o.trackWrites || o.readerIdleMs < Infinity || o.allIdleMs < Infinity || limited;
    const never = this.liveness.never;
    const c = marked ? new MarkedConnection(socket, now, never) : new Connection(socket, now, never);
    if (o.trackWrites) c.extra!.track(socket);
    if (limited) startLimits(c.extra!, c.attachedAt, o);
    if (o.firstMessageMs < Infinity) socket.on('message', this.onFirstMessage);
    // Pings only need to know that something arrived, which the byte counter tells when the record
    // comes due: no listener runs per message. Reader idleness needs the exact time of each read.
    const readsEach = o.readerIdleMs < Infinity || o.allIdleMs < Infinity || c.readMark < 0;
    if (readsEach) socket.on('message', this.onRead);
    if (o.trackWrites) socket.on('ping', this.onPeerPing);
    else if (readsEach) socket.on('ping', this.onRead);
    socket.on('pong', this.onPong);
    this.closeWatch.watch(socket);
    // The slot, unless another heartbeat's record is in it (or it cannot be stamped).
    if (socketRecord(socket) !== undefined || !setSocketRecord(socket, c)) (this.spare ??= new Map()).set(socket, c);
    this.watching++;
    this.schedule.file(c, c.dueAt(o));
  }

  /** The one place a watched connection ends: closed, dead, limited, removed or stopped, it comes through here once. */
  private detach(c: Connection<S>): void {
    if (!c.watched) return;
    const socket = c.socket;
    c.detach();
    if (socketRecord(socket) === c) setSocketRecord(socket, undefined);
    else this.spare?.delete(socket);
    this.watching--;
    this.schedule.unfile(c);
    socket.removeListener('message', this.onRead);
    socket.removeListener('ping', this.onRead);
    socket.removeListener('ping', this.onPeerPing);
    socket.removeListener('message', this.onFirstMessage);
    socket.removeListener('pong', this.onPong);
    this.closeWatch.unwatch(socket);
    this.presence?.gone(socket);
  }
}

/**
 * Starts a heartbeat on a ws `WebSocketServer` (every connection it accepts, now and later) or
 * on one `WebSocket` (a client watching its server). Quiet connections are pinged after
 * `pingIntervalMs`; one that answers nothing within `pongTimeoutMs` is terminated and reported
 * with `'dead'`. Optional Netty-style reader/writer/all idle events. One wheel handle per due
 * time, shared by the connections due then, on the shared wheel unless `wheel` is given.
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
