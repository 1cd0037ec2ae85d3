/**
 * The per-connection state of a heartbeat: last read and write, pings, pong deadline and idle timers.
 * Must not depend on: another adapter (ws's types and core only).
 */
import type { TimerHandle } from '@tickwheel/core';
import type { WebSocket } from 'ws';
import type { SendTracker } from './send-tracker.js';
import type { LivenessState } from './types.js';

/**
 * Bytes read so far by the socket's transport (ws keeps its `net.Socket` as `_socket`), or -1
 * when there is none to read (a socket not open yet, or a stand-in without one).
 */
export function bytesReadOf(socket: WebSocket): number {
  const transport = (socket as { _socket?: { bytesRead?: unknown } | null })._socket;
  const read = transport?.bytesRead;
  return typeof read === 'number' ? read : -1;
}

/** When each idle kind last fired; -Infinity until it does. */
export class IdleMarks {
  reader = -Infinity;
  writer = -Infinity;
  all = -Infinity;
}

/**
 * What the heartbeat knows about one connection. Kept in the controller's map, never on the
 * socket. Activity only writes a timestamp here; the wheel handle is re-armed from these
 * timestamps when it fires (see `heartbeat.ts`), so a busy connection costs one field write per
 * frame and one timer callback per interval.
 */
export class Connection<S extends WebSocket = WebSocket> {
  /** The one wheel handle of this connection; set right after construction. */
  handle!: TimerHandle;
  /** Present while completed sends are observed. */
  sendTracker: SendTracker | undefined = undefined;
  lastReadAt: number;
  lastWriteAt: number;
  /** A ping is outstanding: sent at `lastPingAt`, nothing received since. */
  awaitingPong = false;
  /** Its pong deadline was checked late; it is checked again after the next I/O poll. */
  killPending = false;
  /**
   * Read events are observed with 'message' and 'ping' listeners (exact `lastReadAt`); otherwise
   * reads are noticed from the transport's byte counter when the handle fires.
   */
  listensReads = false;
  /** The transport's `bytesRead` when last sampled; -1 when the socket has no readable counter. */
  readMark = -1;
  /**
   * A read event (a listener) wrote `lastReadAt` since the last sample. A flag rather than the
   * sample's time: a time would be one more boxed double per connection (16 bytes in V8).
   */
  readSinceMark = false;
  /** When the last ping was sent; NaN before the first. */
  lastPingAt = NaN;
  /**
   * Round trip of the last answered ping in whole microseconds, -1 before the first: a small
   * integer is stored in the object itself, a fractional ms figure would be a boxed double.
   */
  rttUs = -1;
  pingsSent = 0;
  /** When each idle kind last fired; only allocated when idle detection is on (it is off by default). */
  idle: IdleMarks | undefined = undefined;

  constructor(
    readonly socket: S,
    readonly attachedAt: number,
  ) {
    this.lastReadAt = attachedAt;
    this.lastWriteAt = attachedAt;
    this.readMark = bytesReadOf(socket);
  }

  /**
   * Samples the transport's byte counter. Bytes that arrived since the last sample, with no read
   * event recorded since, are a read noticed now: whatever the listeners on the socket (a user's
   * `removeAllListeners()` takes ours too), a peer that sends anything is seen alive.
   */
  noticeReads(now: number): void {
    const read = bytesReadOf(this.socket);
    if (read < 0) return;
    if (read !== this.readMark && !this.readSinceMark) this.lastReadAt = now;
    this.readMark = read;
    this.readSinceMark = false;
  }

  /** A copy for the caller: later activity does not change it. */
  snapshot(): LivenessState {
    return {
      attachedAt: this.attachedAt,
      lastReadAt: this.lastReadAt,
      lastWriteAt: this.lastWriteAt,
      tracksWrites: this.sendTracker !== undefined,
      // Anything received since the ping answers it; `check()` clears the flag lazily.
      awaitingPong: this.awaitingPong && this.lastReadAt < this.lastPingAt,
      lastPingAt: Number.isNaN(this.lastPingAt) ? undefined : this.lastPingAt,
      rttMs: this.rttUs < 0 ? undefined : this.rttUs / 1_000,
      pingsSent: this.pingsSent,
    };
  }
}
