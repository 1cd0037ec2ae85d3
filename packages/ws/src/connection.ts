/**
 * The per-connection record of a heartbeat: last read and write, pings, pong deadline and idle marks.
 * Must not depend on: another adapter, or the wheel (ws's types only; the schedule files it).
 */
import type { WebSocket } from 'ws';
import type { DueEntry, DueLink } from './due-schedule.js';
import type { ResolvedOptions } from './options.js';
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

/** A ping is outstanding: sent at `lastPingAt`, and (unless `lastReadAt` moved past it) nothing received since. */
const AWAITING_PONG = 1;
/** Its pong deadline was checked late; it is checked again after the next I/O poll. */
const KILL_PENDING = 2;
/**
 * A read event (a listener) wrote `lastReadAt` since the byte counter was last sampled, so the
 * sample must not overwrite that exact time with the time it was noticed.
 */
const READ_SINCE_MARK = 4;
/** The controller let go of it (closed, removed, dead, stopped); it is never filed again. */
const DETACHED = 8;

/**
 * One pass's pings: the clock reading they count as sent at, shared by every record pinged in
 * the pass. A record keeps a reference to it instead of a time of its own: one pointer write per
 * ping, and no 16-byte number box per record (benchmarks/results/ws.json, heap per connection).
 * `sentAt` is the pass's reading until the pass ends, then the fresh reading taken after its last
 * ping (see `LivenessCheck.endPass`), which every record of the pass sees at once.
 */
export class PingPass {
  constructor(public sentAt: number) {}
}

/** The first value of `attachedAt`: not a number, so that the field is tagged (see the constructor). */
const TAGGED = null as unknown as number;

/**
 * What only writer/all idleness and `trackWrites` need, in an object of its own so that the
 * default heartbeat (pings only) does not carry five empty fields per connection.
 */
export class WriteAndIdle {
  /** Present while completed sends are observed. */
  sendTracker: SendTracker | undefined = undefined;
  /** When each idle kind last fired; -Infinity until it does. */
  reader = -Infinity;
  writer = -Infinity;
  all = -Infinity;

  constructor(public lastWriteAt: number) {}
}

/**
 * What the heartbeat knows about one connection. Kept in the controller's map, never on the
 * socket, and filed in the controller's {@link DueSchedule} under the next time anything is due
 * (`prev`/`next` are its links there). Activity only writes fields here; the schedule moves it
 * when it comes due, or when a pong answers its ping.
 *
 * Eleven fields, the flags packed into one small integer, because there is one per connection
 * (benchmarks/results/ws.json, heap per connection); see the constructor for how the times are
 * stored, and {@link PingPass} for why `lastPingAt` is not one of them.
 */
export class Connection<S extends WebSocket = WebSocket> implements DueEntry {
  prev: DueLink | undefined = undefined;
  next: DueLink | undefined = undefined;
  lastReadAt: number;
  /** The pass that sent the last ping (its `sentAt` is this record's `lastPingAt`); undefined before the first. */
  lastPing: PingPass | undefined = undefined;
  /** The transport's `bytesRead` when last sampled; -1 when the socket has no readable counter. */
  readMark: number;
  /** AWAITING_PONG | KILL_PENDING | READ_SINCE_MARK | DETACHED. */
  flags = 0;
  /**
   * Round trip of the last answered ping in whole microseconds, -1 before the first: a small
   * integer is stored in the object itself, a fractional ms figure would be a boxed double.
   */
  rttUs = -1;
  pingsSent = 0;
  /** Only with writer/all idleness, reader idleness or `trackWrites`. */
  extra: WriteAndIdle | undefined = undefined;

  /** When the heartbeat started watching it. */
  readonly attachedAt: number;

  constructor(
    readonly socket: S,
    attachedAt: number,
  ) {
    // `attachedAt`, written once, is tagged (null first, the trick of core's TimerHandle): records
    // attached in one job share the heap number of its clock reading. `lastReadAt`, rewritten
    // every round, keeps V8's double representation: a 16-byte box per record written in place. Tagged, every pong allocated a fresh heap number referenced from an old record, and the
    // young-generation GC that cost took ~20% more CPU per connection and period than the box's
    // bytes are worth (in-process heartbeat with 10k fake sockets, Node 24: 950 -> 780 ns).
    this.attachedAt = TAGGED;
    this.attachedAt = attachedAt;
    this.lastReadAt = attachedAt;
    this.readMark = bytesReadOf(socket);
  }

  /** A ping is outstanding (see `answered` for whether anything came since). */
  get awaitingPong(): boolean {
    return (this.flags & AWAITING_PONG) !== 0;
  }
  set awaitingPong(value: boolean) {
    this.flags = value ? this.flags | AWAITING_PONG : this.flags & ~AWAITING_PONG;
  }

  get killPending(): boolean {
    return (this.flags & KILL_PENDING) !== 0;
  }
  set killPending(value: boolean) {
    this.flags = value ? this.flags | KILL_PENDING : this.flags & ~KILL_PENDING;
  }

  get readSinceMark(): boolean {
    return (this.flags & READ_SINCE_MARK) !== 0;
  }
  set readSinceMark(value: boolean) {
    this.flags = value ? this.flags | READ_SINCE_MARK : this.flags & ~READ_SINCE_MARK;
  }

  /** False once the controller let go of it. */
  get watched(): boolean {
    return (this.flags & DETACHED) === 0;
  }

  /** The controller lets go of it: checks still running for it stop. */
  detach(): void {
    this.flags |= DETACHED;
  }

  /** When the last ping was sent (see {@link PingPass}); NaN before the first. */
  get lastPingAt(): number {
    return this.lastPing === undefined ? NaN : this.lastPing.sentAt;
  }

  /** A ping of `pass` was sent: a pong is awaited. */
  pinged(pass: PingPass): void {
    this.lastPing = pass;
    this.pingsSent++;
    this.flags |= AWAITING_PONG;
  }

  /** Last completed send (the attach time when writes are not tracked). */
  get lastWriteAt(): number {
    return this.extra === undefined ? this.attachedAt : this.extra.lastWriteAt;
  }

  /** A ping is outstanding and nothing was read since it was sent. */
  get unanswered(): boolean {
    return (this.flags & AWAITING_PONG) !== 0 && this.lastReadAt < this.lastPing!.sentAt;
  }

  /** A read event at `now` (a message or ping listener). */
  read(now: number): void {
    this.lastReadAt = now;
    this.flags |= READ_SINCE_MARK;
  }

  /**
   * A pong at `now`. Returns true when it answers our outstanding ping (its round trip is
   * recorded), false when it is unsolicited or something else answered first.
   */
  pong(now: number): boolean {
    const answers = this.unanswered;
    this.lastReadAt = now;
    if (!answers) {
      this.flags |= READ_SINCE_MARK;
      return false;
    }
    this.rttUs = Math.round((now - this.lastPing!.sentAt) * 1_000);
    this.flags = (this.flags | READ_SINCE_MARK) & ~AWAITING_PONG;
    return true;
  }

  /**
   * Samples the transport's byte counter. Bytes that arrived since the last sample, with no read
   * event recorded since, are a read noticed now: whatever the listeners on the socket (a user's
   * `removeAllListeners()` takes ours too), a peer that sends anything is seen alive.
   */
  noticeReads(now: number): void {
    const read = bytesReadOf(this.socket);
    if (read < 0) return;
    if (read !== this.readMark && (this.flags & READ_SINCE_MARK) === 0) this.lastReadAt = now;
    this.readMark = read;
    this.flags &= ~READ_SINCE_MARK;
  }

  /** The earliest time anything is due on this connection; Infinity when nothing ever is. */
  dueAt(o: ResolvedOptions): number {
    let due = Infinity;
    if (o.pingIntervalMs > 0) {
      if ((this.flags & AWAITING_PONG) !== 0) {
        due = this.lastPing!.sentAt + o.pongTimeoutMs;
      } else {
        due = this.lastReadAt + o.pingIntervalMs;
        // Round up to the slack grid, so that pings due close together share one wheel pass.
        if (o.pingSlackMs > 0) due = Math.max(due, Math.ceil(due / o.pingSlackMs) * o.pingSlackMs);
      }
    }
    const x = this.extra;
    if (x === undefined) return due;
    if (o.readerIdleMs > 0) due = Math.min(due, Math.max(this.lastReadAt, x.reader) + o.readerIdleMs);
    if (o.writerIdleMs > 0) due = Math.min(due, Math.max(x.lastWriteAt, x.writer) + o.writerIdleMs);
    if (o.allIdleMs > 0) due = Math.min(due, Math.max(this.lastReadAt, x.lastWriteAt, x.all) + o.allIdleMs);
    return due;
  }

  /** A copy for the caller: later activity does not change it. */
  snapshot(): LivenessState {
    return {
      attachedAt: this.attachedAt,
      lastReadAt: this.lastReadAt,
      lastWriteAt: this.lastWriteAt,
      tracksWrites: this.extra?.sendTracker !== undefined,
      // Anything received since the ping answers it; the next check clears the flag lazily.
      awaitingPong: this.unanswered,
      lastPingAt: this.lastPing?.sentAt,
      rttMs: this.rttUs < 0 ? undefined : this.rttUs / 1_000,
      pingsSent: this.pingsSent,
    };
  }
}
