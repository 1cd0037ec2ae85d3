/**
 * The public types of @tickwheel/ws: heartbeat options, idle kinds, events.
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import type { IncomingMessage } from 'node:http';
import type { TimeoutBudget, TimingWheel } from '@tickwheel/core';
import type { WebSocket } from 'ws';

/**
 * A cluster-wide presence the heartbeat keeps up to date (its `presence` option): `RedisPresence`
 * from `@tickwheel/redis`, or anything with these two methods. `connection` is the WebSocket. A
 * returned promise's rejection is the tracker's to report.
 */
export interface PresenceTracker {
  join(member: string, connection: object): unknown;
  leave(member: string, connection: object): unknown;
}

/**
 * Options of {@link heartbeat}. Every one is optional; the defaults are listed in one place,
 * `DEFAULTS` in `options.ts`, and in the README's options table.
 */
export interface HeartbeatOptions {
  /**
   * Ping a connection after it has received nothing (no message, ping or pong) for this long.
   * A connection that receives something at least every half interval is never pinged. With
   * `pongTimeoutMs`, the bound on finding a dead peer: it is declared dead within
   * `pingIntervalMs + pongTimeoutMs` of its last frame (plus `pingSlackMs` and a 1 ms tick).
   * 0 disables pings (idle detection only). Default 30 000.
   */
  pingIntervalMs?: number;
  /**
   * Terminate a connection that receives nothing within this long after a ping (so a silent peer
   * is dead within `pingIntervalMs + pongTimeoutMs` of its last frame, plus the slack). Must be > 0
   * and <= `pingIntervalMs`. Default `min(10 000, pingIntervalMs)`.
   */
  pongTimeoutMs?: number;
  /**
   * A ping may go out up to this much later than due, so that pings due close together are sent
   * together, in one pass of the wheel and one turn of the event loop (timer coalescing, as
   * Linux's timer slack). It never delays a pong deadline: that runs from the ping.
   * 0 sends every ping at its exact time. Must be <= `pingIntervalMs`. Default `pingIntervalMs / 32`.
   */
  pingSlackMs?: number;
  /** Emit `'idle'` with kind `'reader'` after nothing was received for this long. 0 or Infinity disables. Default off. */
  readerIdleMs?: number;
  /**
   * Emit `'idle'` with kind `'writer'` after nothing was written for this long. Writes are seen
   * when the connection comes due (the transport's byte counter), so an event comes between this
   * long and twice this long after the last write. 0 or Infinity disables. Default off.
   */
  writerIdleMs?: number;
  /** Emit `'idle'` with kind `'all'` after neither a read nor a write for this long (writes as for `writerIdleMs`). 0 or Infinity disables. Default off. */
  allIdleMs?: number;
  /**
   * Close the connection (a normal closing handshake with `idleCloseCode`/`idleCloseReason`)
   * after emitting `'idle'`. Default false: idle events only report, as Netty's IdleStateHandler does.
   */
  closeOnIdle?: boolean;
  /** Close code sent with a closing handshake started by `closeOnIdle`. Default 1000. */
  idleCloseCode?: number;
  /** Close reason sent with a closing handshake started by `closeOnIdle` (<= 123 bytes of UTF-8). Default `'idle timeout'`. */
  idleCloseReason?: string;
  /**
   * Close code put in the close frame sent, best effort, to a dead peer right before the socket
   * is destroyed. Default 1001 (going away).
   */
  closeCode?: number;
  /** Close reason sent with `closeCode` (<= 123 bytes of UTF-8). Default `'heartbeat timeout'`. */
  closeReason?: string;
  /**
   * Observe writes: sample the transport's `bytesWritten` when a connection comes due, minus the
   * heartbeat's own frames (its pings, ws's automatic pongs). Nothing is patched onto the socket.
   * Default: true exactly when `writerIdleMs`, `allIdleMs` or `keepaliveMs` is enabled; it cannot be false then.
   */
  trackWrites?: boolean;
  /**
   * Close (1008, policy violation) a connection that has not received a data message within this
   * long after the heartbeat started watching it (the server's `'connection'`): the "auth within
   * N seconds" deadline. A connection that has received one is never touched by it;
   * `controller.admit(socket)` ends the wait early. 0 or Infinity disables. Default off.
   */
  firstMessageMs?: number;
  /**
   * Close (1001, going away) each connection at a uniformly random point in
   * `[maxLifetimeMs × (1 − lifetimeJitter), maxLifetimeMs]` after it was attached, so that load
   * balancers can rebalance long-lived sockets without a reconnect wave. 0 or Infinity disables. Default off.
   */
  maxLifetimeMs?: number;
  /** The fraction (0–1) of `maxLifetimeMs` by which lifetimes are spread. Needs `maxLifetimeMs`. Default 0. */
  lifetimeJitter?: number;
  /**
   * Terminate a connection whose `bufferedAmount` (our data queued, not yet written) stays above
   * this many bytes for `drainTimeoutMs`: a slow consumer. 0 or Infinity disables. Default off.
   */
  maxBufferedBytes?: number;
  /**
   * How long `bufferedAmount` may stay above `maxBufferedBytes`. It is sampled every
   * `drainTimeoutMs`, so a consumer is cut off between this long and twice this long after it
   * fell behind. Must be > 0; needs `maxBufferedBytes`. Default 10 000.
   */
  drainTimeoutMs?: number;
  /** The wheel holding the heartbeat's handles (one per due time, shared by the connections due then). Default `sharedWheel()`. */
  wheel?: TimingWheel;
  /**
   * Send `keepaliveMessage` to a connection that has been sent nothing for this long, for peers
   * that cannot see protocol pings: pages watching with `watch()` from `@tickwheel/ws/browser`.
   * What was sent is read as writer idleness reads it (`trackWrites`, on with this): from the
   * transport's byte counter when the connection comes due, so a keepalive may come up to this
   * much later than the last send: the peer hears something at least every 2 × keepaliveMs. A
   * keepalive is a write (`lastWriteAt`; writer idleness sees it), not the peer's activity (it
   * answers no ping). 0 (or Infinity) turns it off. Default off.
   */
  keepaliveMs?: number;
  /** The text frame sent as a keepalive (never compressed). Needs `keepaliveMs`. Default `''`. */
  keepaliveMessage?: string;
  /**
   * Tracks each connection in a cluster-wide presence (`RedisPresence` from `@tickwheel/redis`):
   * `presence.join(memberOf(request), socket)` when the server accepts it, `presence.leave(...)`
   * when it closes, the heartbeat declares it dead, or the heartbeat stops watching it. Only
   * connections accepted through the server's `'connection'` event are tracked (they carry the
   * upgrade request). Needs `memberOf` and a server. Default: none.
   */
  presence?: PresenceTracker;
  /**
   * The member a connection belongs to, from its upgrade request (a user id from a verified
   * token, say); `undefined`: the connection is not tracked. Needs `presence`.
   */
  memberOf?: (request: IncomingMessage) => string | undefined;
}

/** Which kind of idleness an `'idle'` event reports, as in Netty's `IdleState`. */
export type IdleKind = 'reader' | 'writer' | 'all';

/**
 * A snapshot of one connection's liveness, from `controller.state(socket)`. Times are readings of
 * the wheel's clock (`wheel.clock.now()`: monotonic milliseconds, `performance.now()` for the
 * shared wheel), not wall-clock dates.
 */
export interface LivenessState {
  /**
   * When the heartbeat started watching the connection, rounded up to the whole millisecond (the
   * wheel's resolution), so it may read up to 1 ms after the clock did at that moment.
   */
  readonly attachedAt: number;
  /**
   * Last read activity: a message, ping or pong received (initially `attachedAt`). Exact with
   * reader or all idleness on; with pings only, a message is seen when the connection comes due,
   * so this is when the heartbeat noticed it (at most one interval late). A pong is stamped with
   * the clock reading of the I/O poll that read it (on the system clock, the pongs of one poll
   * share the reading taken at the first of them, never one older than the ping they answer).
   */
  readonly lastReadAt: number;
  /**
   * Last write noticed: the check that first saw the transport's `bytesWritten` moved by more
   * than the heartbeat's own frames (initially `attachedAt`; stays there when writes are not tracked).
   */
  readonly lastWriteAt: number;
  /** Whether writes are observed (see `trackWrites`). */
  readonly tracksWrites: boolean;
  /** A ping was sent and nothing has been received since. */
  readonly awaitingPong: boolean;
  /**
   * When the last heartbeat ping was sent (the clock reading right after the pass that sent it,
   * from which its pong deadline runs), or undefined before the first one.
   */
  readonly lastPingAt: number | undefined;
  /**
   * Round trip of the last answered ping in ms (rounded to the microsecond), or undefined when
   * none was answered yet: from `lastPingAt` to the pong's `lastReadAt`, so it can read up to the
   * length of the I/O poll that delivered the pong short, and both ends are taken around a pass,
   * not per socket.
   */
  readonly rttMs: number | undefined;
  /** Heartbeat pings sent on this connection. */
  readonly pingsSent: number;
}

/** Payload of the `'dead'` event: the peer did not answer a ping in time and was terminated. */
export interface DeadPeerEvent<S = WebSocket> {
  readonly reason: 'dead';
  /** The socket, already terminated (`readyState` CLOSING; its `'close'` event follows with code 1006). */
  readonly socket: S;
  /** Its liveness when it was declared dead. */
  readonly state: LivenessState;
  /** Milliseconds from the unanswered ping to the termination (>= `pongTimeoutMs`). */
  readonly waitedMs: number;
  /** Milliseconds from the peer's last frame (`state.lastReadAt`, any frame, a pong included) to the termination. */
  readonly sinceLastFrameMs: number;
  /**
   * Where the time went (core's shape): `limit` `'pongTimeoutMs'`, `elapsedMs` the wait since the
   * ping, and `lateMs` how long past the pong deadline the check ran; a large `lateMs` means this
   * process stalled, so the peer may not be to blame (`describeBudget` from `@tickwheel/core` says so).
   */
  readonly budget: TimeoutBudget;
}

/** Payload of the `'idle'` event. */
export interface IdleEvent<S = WebSocket> {
  readonly reason: 'idle';
  readonly kind: IdleKind;
  readonly socket: S;
  /** Milliseconds since the last activity of that kind. */
  readonly idleMs: number;
  /** True for the first event of an idle stretch; repeats (every `<kind>IdleMs` while still idle) have false. */
  readonly first: boolean;
  /** True when `closeOnIdle` is set: the closing handshake starts right after the listeners return. */
  readonly closing: boolean;
  readonly state: LivenessState;
}

/** Which connection limit an `'limit'` event reports. */
export type LimitKind = 'firstMessage' | 'lifetime' | 'slowConsumer';

/**
 * Payload of the `'limit'` event: a connection reached `firstMessageMs` (closed with 1008),
 * `maxLifetimeMs` (closed with 1001) or `maxBufferedBytes` for `drainTimeoutMs` (terminated).
 */
export interface LimitEvent<S = WebSocket> {
  readonly reason: 'limit';
  readonly kind: LimitKind;
  readonly socket: S;
  readonly state: LivenessState;
}

/** The events of a {@link HeartbeatController}, in the shape of Node's typed `EventEmitter<T>`. */
export interface HeartbeatEvents<S = WebSocket> {
  dead: [event: DeadPeerEvent<S>];
  idle: [event: IdleEvent<S>];
  limit: [event: LimitEvent<S>];
}

/** Counters of a controller's life, from `controller.stats()`. */
export interface HeartbeatStats {
  /** Connections being watched now. */
  connections: number;
  /** Heartbeat pings sent. */
  pingsSent: number;
  /** Connections terminated as dead. */
  dead: number;
  /** `'idle'` events emitted. */
  idle: number;
  /** `'limit'` events emitted (connections closed or terminated by a limit). */
  limits: number;
  /** Keepalives sent (`keepaliveMs`). */
  keepalivesSent: number;
}
