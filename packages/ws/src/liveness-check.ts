/**
 * LivenessCheck: what happens when a connection's record comes due: ping it, terminate it, or report it idle.
 *
 * A record is compared with the clock when its due time comes (see `due-schedule.ts`): reads it
 * missed are noticed from the byte counter, an outstanding ping is answered by anything read
 * since, or past `pongTimeoutMs` ends the connection; due idle kinds are reported; a quiet
 * connection is pinged. The record is filed again under whatever is due next BEFORE any
 * listener runs, so a throwing listener cannot leave the connection unwatched.
 *
 * A pong deadline found more than `LATE_CHECK_MS` past due means our own loop was busy, and the
 * answer may be waiting in the kernel: such records are checked once more after the next I/O
 * poll (one `setImmediate` for all of them), and only then terminated. Not when a poll already
 * ran since the deadline passed (a pong of any connection was read after it, say in the poll the
 * core driver lets run before a late wheel pass): that poll read every socket that was ready, so
 * nothing that arrived in time is still waiting, and waiting for another one would only add its
 * length (milliseconds with 10k connections) to the termination.
 * On time, nothing is waiting that a poll would read.
 *
 * A ping is only a question once it is on the wire. When our own data is queued on the socket
 * (`bufferedAmount` > 0: a large message being sent, a full compression queue), the ping waits
 * behind it, so its pong deadline starts when ws reports the ping written (its `ping()`
 * callback), not at the pass. A deadline that finds the ping still queued terminates the peer
 * only when the transport passed nothing to the kernel for a whole `pingIntervalMs` (since the
 * ping, or since it last did), and otherwise looks again then: a connection still draining our
 * data is alive; one whose queue stood still that long is not reading, and is dead. (The kernel takes a slow reader's data in
 * bursts of a fraction of its send buffer, so progress is only seen at that grain: hence the
 * interval, not the pong timeout.)
 *
 * A record the check takes off the schedule for a while (pinged in the pass that is running,
 * waiting for the next poll, or idle and closing) waits in a held ring of its own, so the
 * controller finds every record it has in the schedule's rings ({@link LivenessCheck.heldRings}).
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import type { EventEmitter } from 'node:events';
import { freshNow } from '@tickwheel/core';
import { ownBudget } from '@tickwheel/core/internal';
import type { WebSocket } from 'ws';
import { publishTerminate } from './channels.js';
import type { Connection } from './connection.js';
import { DueSchedule, heldRing, type DueGroup, type DueRunner } from './due-schedule.js';
import { controlFrameBytes, dataFrameBytes } from './frame-size.js';
import { dueIdle } from './idle.js';
import { dueLimit } from './limits.js';
import type { ResolvedOptions } from './options.js';
import { PingPass } from './readings.js';
import { writeProgressOf, wroteSince, type WriteProgress } from './transport-probes.js';
import type { HeartbeatEvents, HeartbeatStats, LimitKind } from './types.js';

/** WebSocket ready states (RFC 6455 / WHATWG), the same numbers ws uses. */
const OPEN = 1;
const CLOSED = 3;

/** A pong deadline checked this much past due was checked late, by our own loop's delay. */
const LATE_CHECK_MS = 2;

/** How often a record found on a closing socket looks again, until the socket is closed. */
const CLOSING_RECHECK_MS = 1_000;

/** What the check needs from its controller. */
export interface CheckHost<S extends WebSocket> {
  /** Forgets the record (marking it detached) and removes the socket's listeners. */
  detach(c: Connection<S>): void;
  /** Where `'dead'` and `'idle'` are emitted: the controller. */
  readonly events: EventEmitter<HeartbeatEvents<S>>;
}

/** See the module comment. */
export class LivenessCheck<S extends WebSocket> implements DueRunner<Connection<S>> {
  readonly counters: Omit<HeartbeatStats, 'connections'> = {
    pingsSent: 0,
    dead: 0,
    idle: 0,
    limits: 0,
    keepalivesSent: 0,
  };
  /** Records whose pong deadline was checked late, held to check again after the next I/O poll. */
  private readonly afterPoll = heldRing();
  /** Records idle and closing (`closeOnIdle`): nothing is due on them any more, their close detaches them. */
  private readonly closing = heldRing();
  /** Its records' `lastPing` until their first ping; every pass it sends has the same owner (see `PingPass`). */
  readonly never = PingPass.never(this);
  /**
   * When the last I/O poll that read a pong ended (a fresh reading taken right after it, see
   * poll-reading.ts), that is, the latest poll we know of: pongs are read in the poll phase,
   * and libuv's poll reads every socket that is ready.
   */
  lastPongReadAt = -Infinity;
  /** Records pinged in this pass, held until it ends and files them all under their pong deadline (see `endPass`). */
  private readonly pinged = heldRing();
  /**
   * Records whose ping waits behind our own queued data, with the transport's progress when it
   * last moved (or at the ping) and when that was (see the module comment); created on the first.
   */
  private queued: Map<Connection<S>, { progress: WriteProgress; since: number }> | undefined = undefined;
  /** The pings of this pass, until it ends; undefined when it sent none yet. */
  private pass: PingPass | undefined = undefined;
  /** The keepalive's payload in bytes (UTF-8). */
  private readonly keepaliveBytes: number;

  /** Where its records are filed; it runs them when they come due (it is the schedule's runner). */
  readonly schedule: DueSchedule<Connection<S>>;

  constructor(
    private readonly o: ResolvedOptions,
    private readonly host: CheckHost<S>,
    private readonly side: 'server' | 'client',
  ) {
    this.keepaliveBytes = Buffer.byteLength(o.keepaliveMessage);
    this.schedule = new DueSchedule<Connection<S>>(o.wheel, this);
  }

  /** Compares `c` with the clock reading `now`, acts, and files it again. */
  run(c: Connection<S>, now: number): void {
    const socket = c.socket;
    const o = this.o;
    const readyState = socket.readyState;
    if (readyState !== OPEN) {
      // Closing: its 'close' event detaches it, unless someone removed our listener; then this does.
      if (readyState === CLOSED) this.host.detach(c);
      else this.schedule.file(c, now + CLOSING_RECHECK_MS);
      return;
    }
    c.noticeReads(now);
    const x = c.extra;
    if (x !== undefined) {
      if (x.tracks) x.noticeWrites(socket, now);
      const limit = dueLimit(x, socket.bufferedAmount, now, o);
      if (limit !== undefined) return this.limit(c, limit, now);
    }

    if (c.awaitingPong) {
      const deadline = c.lastPingAt + o.pongTimeoutMs;
      if (!c.unanswered) {
        c.awaitingPong = false;
        if (c.pingQueued) this.pingSettled(c);
      } else if (now >= deadline) {
        // Our ping is not on the wire yet: wait while our data ahead of it moves.
        if (c.pingQueued) {
          const lookAgainAt = this.stillDraining(c, now);
          return lookAgainAt === undefined ? this.kill(c) : this.schedule.file(c, lookAgainAt);
        }
        if (now > deadline + LATE_CHECK_MS && !c.killPending && !(this.lastPongReadAt > deadline))
          return this.checkAfterPoll(c);
        return this.kill(c);
      }
    }

    const due = x === undefined ? undefined : dueIdle(x, c.lastReadAt, now, o);
    const closing = due !== undefined && o.closeOnIdle;

    let pinged = false;
    if (!closing && o.pingIntervalMs < Infinity && !c.awaitingPong && now >= c.lastReadAt + o.pingIntervalMs) {
      // Sent at `now` until the pass ends, see `endPass`.
      c.pinged((this.pass ??= new PingPass(now, this)));
      this.counters.pingsSent++;
      // Held before the ping: a socket whose ping() throws is still filed when the pass ends.
      // With keepalives, filed by itself instead: its next keepalive may fall due before the pong
      // deadline the held ring files at (under the pass's reading until it ends: early, never late).
      if (o.keepaliveMs < Infinity) this.schedule.file(c, c.dueAt(o));
      else this.schedule.hold(c, this.pinged);
      if (x !== undefined && x.tracks) x.ownBytes += controlFrameBytes(socket, 0, this.side === 'client');
      // Behind our own queued data, the deadline waits for the ping to be written.
      if (socket.bufferedAmount > 0) this.pingBehind(c, socket, now);
      else {
        this.queued?.delete(c);
        socket.ping();
      }
      pinged = true;
    }

    if (o.keepaliveMs < Infinity && x !== undefined && !closing && now >= x.lastWriteAt + o.keepaliveMs) {
      // A write of ours: it moves lastWriteAt now, and its bytes are not noticed again.
      x.lastWriteAt = now;
      if (x.tracks) x.ownBytes += dataFrameBytes(socket, this.keepaliveBytes, this.side === 'client');
      this.counters.keepalivesSent++;
      // Uncompressed, so that its size on the wire is known.
      socket.send(o.keepaliveMessage, { compress: false });
    }

    if (closing) this.schedule.hold(c, this.closing);
    else if (!pinged || o.keepaliveMs < Infinity) this.schedule.file(c, c.dueAt(o));
    if (due === undefined) return;
    if (closing) {
      const idle = due[0];
      publishTerminate(`idle-${idle.kind}`, idle.idleMs, o[`${idle.kind}IdleMs`], socket, this.side);
    }
    for (const idle of due) {
      if (!c.watched) return; // a listener removed it or stopped us
      this.counters.idle++;
      this.host.events.emit('idle', { reason: 'idle', ...idle, socket, closing, state: c.snapshot() });
    }
    if (closing && socket.readyState === OPEN) socket.close(o.idleCloseCode, o.idleCloseReason);
  }

  /**
   * Ends a pass: the pings it sent get their time, one fresh reading taken after the last of
   * them, and their deadline `pongTimeoutMs` after it. So no peer gets less than `pongTimeoutMs`
   * from its ping to its deadline (the first pings of a long pass get up to the pass's length
   * more), and the pass reads the clock once instead of once per ping.
   * Until then the pinged records wait in a held ring, filed all at once (a record a listener
   * removed or filed elsewhere meanwhile has left the ring), and share one {@link PingPass}, whose
   * time is set once for all of them.
   */
  endPass(): void {
    const pass = this.pass;
    if (pass === undefined) return;
    this.pass = undefined;
    pass.sentAt = freshNow(this.o.wheel.clock);
    this.schedule.fileAll(this.pinged, pass.sentAt + this.o.pongTimeoutMs);
  }

  /** Sends `c`'s ping behind queued data: its deadline starts when ws reports it written. */
  private pingBehind(c: Connection<S>, socket: S, now: number): void {
    const pass = c.lastPing;
    c.pingQueued = true;
    const progress = writeProgressOf(socket);
    if (progress !== undefined) (this.queued ??= new Map()).set(c, { progress, since: now });
    socket.ping(undefined, undefined, (err?: Error) => {
      // Pinged again since: the newer ping has the record's entry.
      if (c.lastPing !== pass) return;
      const waiting = c.pingQueued;
      this.pingSettled(c);
      // Answered, detached or failed: nothing waits for this ping any more.
      if (!waiting || err != null || !c.watched) return;
      c.lastPing = new PingPass(freshNow(this.o.wheel.clock), this);
      if (c.prev !== undefined && !c.killPending) this.schedule.file(c, c.dueAt(this.o));
    });
  }

  /** `c`'s queued ping was written, answered or given up. */
  private pingSettled(c: Connection<S>): void {
    c.pingQueued = false;
    this.queued?.delete(c);
  }

  /**
   * When to look at `c`'s queued ping again, or undefined when its queue stood still for a whole
   * `pingIntervalMs` (since the ping, or since it last moved): the peer is not reading.
   */
  private stillDraining(c: Connection<S>, now: number): number | undefined {
    const entry = this.queued?.get(c);
    const progress = writeProgressOf(c.socket);
    if (entry === undefined || progress === undefined) return undefined;
    if (wroteSince(entry.progress, progress)) {
      this.queued!.set(c, { progress, since: now });
      return now + this.o.pingIntervalMs;
    }
    const giveUpAt = entry.since + this.o.pingIntervalMs;
    return now < giveUpAt ? giveUpAt : undefined;
  }

  /** The rings where this check holds records off the schedule's groups (see the module comment). */
  get heldRings(): DueGroup[] {
    return [this.pinged, this.afterPoll, this.closing];
  }

  /** Checks `c` again right after the next I/O poll (`setImmediate` runs after the poll phase); held meanwhile. */
  private checkAfterPoll(c: Connection<S>): void {
    c.killPending = true;
    const first = this.afterPoll.next === this.afterPoll;
    this.schedule.hold(c, this.afterPoll);
    if (first) setImmediate(() => this.runAfterPoll());
  }

  private runAfterPoll(): void {
    const ring = this.afterPoll;
    try {
      // Each leaves the ring before it runs; a record detached meanwhile has left it already.
      // Those held after this poll (a listener that ran the wheel) wait for the next one.
      const last = ring.prev;
      for (let e = ring.next; e !== ring; e = ring.next) {
        const c = e as Connection<S>;
        this.schedule.unfile(c);
        // Still pending while it runs: a check that finds it unanswered now terminates it.
        this.run(c, this.o.wheel.clock.now());
        c.killPending = false;
        if (c === last) break;
      }
    } finally {
      this.endPass();
      // A 'dead' listener threw: the others are checked after the next poll, not never.
      if (ring.next !== ring) setImmediate(() => this.runAfterPoll());
    }
  }

  /**
   * A connection limit was reached: a slow consumer is terminated (its queue would delay a
   * closing handshake too); the others get a closing handshake right after the listeners return
   * (1008 for a missing first message, 1001 at the end of a lifetime), held until their close.
   */
  private limit(c: Connection<S>, kind: LimitKind, now: number): void {
    const socket = c.socket;
    const o = this.o;
    const state = c.snapshot();
    this.counters.limits++;
    if (kind === 'slowConsumer') {
      this.host.detach(c);
      socket.terminate();
      publishTerminate('limit-slowConsumer', now - c.extra!.overSince, o.drainTimeoutMs, socket, this.side);
    } else {
      this.schedule.hold(c, this.closing);
      const limitMs = kind === 'lifetime' ? o.maxLifetimeMs : o.firstMessageMs;
      publishTerminate(`limit-${kind}`, now - c.attachedAt, limitMs, socket, this.side);
    }
    this.host.events.emit('limit', { reason: 'limit', kind, socket, state });
    if (kind === 'lifetime' && socket.readyState === OPEN) socket.close(1001, 'connection lifetime reached');
    else if (kind === 'firstMessage' && socket.readyState === OPEN) socket.close(1008, 'no message in time');
  }

  /** No answer in time: best-effort close frame, destroy the socket, report. */
  private kill(c: Connection<S>): void {
    const socket = c.socket;
    if (c.pingQueued) this.pingSettled(c);
    const state = c.snapshot();
    const now = freshNow(this.o.wheel.clock);
    const waitedMs = now - c.lastPingAt;
    this.host.detach(c);
    this.counters.dead++;
    // The peer may only be stalled (a paused reader): the close frame tells it why, if it ever reads again.
    socket.close(this.o.closeCode, this.o.closeReason);
    socket.terminate();
    publishTerminate('pong-timeout', waitedMs, this.o.pongTimeoutMs, socket, this.side);
    const pongTimeoutMs = this.o.pongTimeoutMs;
    // The check's lateness is past the ping's own deadline: a large one means our loop stalled, not the peer.
    const budget = ownBudget('pongTimeoutMs', pongTimeoutMs, waitedMs, waitedMs - pongTimeoutMs);
    const sinceLastFrameMs = now - state.lastReadAt;
    this.host.events.emit('dead', { reason: 'dead', socket, state, waitedMs, sinceLastFrameMs, budget });
  }
}
