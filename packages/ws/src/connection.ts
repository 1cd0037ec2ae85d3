/**
 * connection: the per-connection record of a heartbeat: last read and write, pings, pong deadline and idle marks.
 *
 * # What `lastReadAt` promises
 *
 * A dead peer must be declared dead within `pingIntervalMs + pongTimeoutMs` of its last frame
 * (plus `pingSlackMs` and a wheel tick), as engine.io promises with `pingInterval + pingTimeout`.
 * So `lastReadAt` is never later than the peer's last frame: the exact time of a read a listener
 * heard (a pong, or with reader idleness every message), or, for bytes that only the transport's
 * counter showed when the record was sampled, the time of the sample before (they came after
 * it), or the ping's time when they answer one. The ping goes out when `lastReadAt +
 * pingIntervalMs` comes (rounded up to the slack grid), and its deadline `pongTimeoutMs` later.
 *
 * A peer that talks (bytes no listener timed) would then be pinged every interval, its talk
 * landing between two samples an interval apart. So a record whose last sample found such bytes
 * ({@link TALKING}) is sampled every half interval instead: each sample that finds more bytes
 * moves `lastReadAt` to the sample before, half an interval back, and the ping never comes due
 * while the peer says something every half interval. A talking peer that falls silent is pinged
 * at the first sample that finds nothing new, at most one interval after the sample before its
 * last frame. A pong's own bytes are taken into the mark ({@link Connection.pong}), so talk
 * that follows it counts from the pong on.
 */
import type { WebSocket } from 'ws';
import type { DueEntry, DueLink } from './due-schedule.js';
import type { ResolvedOptions } from './options.js';
import { PingPass, Reading, readingAt } from './readings.js';
import {
  AWAITING_PONG,
  DETACHED,
  FLAG_BITS,
  FLAG_MASK,
  KILL_PENDING,
  markOf,
  NO_COUNTER,
  OWN_READING,
  PING_QUEUED,
  READ_SINCE_MARK,
  TALKING,
} from './record-flags.js';
import { bytesReadOf } from './transport-probes.js';
import type { LivenessState } from './types.js';
import { WriteAndIdle } from './write-marks.js';

/** The "no ping yet" of records that belong to no heartbeat (built on their own, as in tests). */
const NEVER_PINGED = PingPass.never(undefined);

/**
 * What the heartbeat knows about one connection. Kept in a hidden slot on the socket (a private
 * class field, see socket-record.ts), and filed in the controller's {@link DueSchedule} under the
 * next time anything is due (`prev`/`next` are its links there; through them the controller also
 * finds every record it has). Activity only writes fields here; the schedule moves it when it
 * comes due, or when a pong answers its ping.
 *
 * Few fields and no number box of its own, because there is one per connection: the flags and
 * the byte counter's mark share one small integer (record-flags.ts), the last read, the last
 * sample and the last ping are references to shared readings ({@link Reading}, {@link PingPass},
 * whose `owner` also tells whose record it is), and `attachedAt` is a whole ms (sizes in
 * benchmarks/README.md).
 */
export class Connection<S extends WebSocket = WebSocket> implements DueEntry {
  prev: DueLink | undefined = undefined;
  next: DueLink | undefined = undefined;
  /** The last read (`lastReadAt` is its time); undefined until the first, which leaves it at `attachedAt`. */
  private lastRead: Reading | undefined = undefined;
  /**
   * When a sample of the byte counter last found it moved (an earlier time, the attach's when
   * undefined): a time known to precede bytes the next sample finds.
   */
  private sampled: Reading | undefined = undefined;
  /**
   * The pass that sent the last ping (its `sentAt` is this record's `lastPingAt`); before the
   * first, the owner's {@link PingPass.never}.
   */
  lastPing: PingPass;
  /**
   * Flags (record-flags.ts) in the low FLAG_BITS, the byte counter's mark above them. Pays in the
   * ws suite's heap-per-connection row: its 128 B allowance over the README heartbeat has 23-31 B
   * left (results/ws.json), and a boolean field per flag would take 40 B more per connection.
   */
  private bits: number;
  /**
   * Round trip of the last answered ping in whole microseconds, -1 before the first: a small
   * integer is stored in the object itself, a fractional ms figure would be a boxed double.
   */
  rttUs = -1;
  pingsSent = 0;
  /**
   * Only with writer/all idleness, reader idleness or `trackWrites` (a {@link MarkedConnection});
   * otherwise undefined, read from the prototype: the default record has no field for it, 8 B
   * less per connection in the ws suite's heap-per-connection row.
   */
  declare readonly extra: WriteAndIdle | undefined;

  /**
   * When the heartbeat started watching it, rounded up to the whole ms (the wheel's resolution):
   * a small integer, stored in the record itself. Every due time is rounded up to the whole ms
   * when filed, so no ping or idle event comes sooner for it; an exact reading would be a number
   * box per record (each connection is attached in a job of its own, so no two share one).
   */
  readonly attachedAt: number;

  /**
   * @param never - its heartbeat's "no ping yet" pass ({@link PingPass.never}), which tells whose record it is
   */
  constructor(
    readonly socket: S,
    attachedAt: number,
    never: PingPass = NEVER_PINGED,
  ) {
    this.lastPing = never;
    this.attachedAt = Math.ceil(attachedAt);
    const read = bytesReadOf(socket);
    // Looked at first after half an interval, as a talking one: a peer that talks from the start is not pinged.
    this.bits = read < 0 ? NO_COUNTER : TALKING | (markOf(read) << FLAG_BITS);
  }

  /** The last read: when a listener heard it, or the latest time known to precede it (see the module comment). */
  get lastReadAt(): number {
    return this.lastRead === undefined ? this.attachedAt : this.lastRead.at;
  }
  /** A read at `at` (what a read listener records: see {@link Connection.read}). */
  set lastReadAt(at: number) {
    if ((this.bits & OWN_READING) !== 0) this.lastRead!.at = at;
    else {
      this.lastRead = new Reading(at);
      this.bits |= OWN_READING;
    }
  }

  /** The transport's `bytesRead` (modulo 2^22) when last sampled; -1 when the socket has no readable counter. */
  get readMark(): number {
    return (this.bits & NO_COUNTER) !== 0 ? -1 : this.bits >>> FLAG_BITS;
  }

  /** A ping is outstanding (see `answered` for whether anything came since). */
  get awaitingPong(): boolean {
    return (this.bits & AWAITING_PONG) !== 0;
  }
  set awaitingPong(value: boolean) {
    this.bits = value ? this.bits | AWAITING_PONG : this.bits & ~AWAITING_PONG;
  }

  get killPending(): boolean {
    return (this.bits & KILL_PENDING) !== 0;
  }
  set killPending(value: boolean) {
    this.bits = value ? this.bits | KILL_PENDING : this.bits & ~KILL_PENDING;
  }

  /** The outstanding ping waits behind our own queued data (see `PING_QUEUED`). */
  get pingQueued(): boolean {
    return (this.bits & PING_QUEUED) !== 0;
  }
  set pingQueued(value: boolean) {
    this.bits = value ? this.bits | PING_QUEUED : this.bits & ~PING_QUEUED;
  }

  get readSinceMark(): boolean {
    return (this.bits & READ_SINCE_MARK) !== 0;
  }
  set readSinceMark(value: boolean) {
    this.bits = value ? this.bits | READ_SINCE_MARK : this.bits & ~READ_SINCE_MARK;
  }

  /** The last sample found bytes no listener timed (see the module comment). */
  get talking(): boolean {
    return (this.bits & TALKING) !== 0;
  }

  /** False once the controller let go of it. */
  get watched(): boolean {
    return (this.bits & DETACHED) === 0;
  }

  /** The controller lets go of it: checks still running for it stop. */
  detach(): void {
    this.bits |= DETACHED;
  }

  /** When the last ping was sent (see {@link PingPass}); NaN before the first. */
  get lastPingAt(): number {
    return this.lastPing.sentAt;
  }

  /** The heartbeat whose record it is (see {@link PingPass}). */
  get owner(): object | undefined {
    return this.lastPing.owner;
  }

  /** A ping of `pass` was sent: a pong is awaited. */
  pinged(pass: PingPass): void {
    this.lastPing = pass;
    this.pingsSent++;
    this.bits = (this.bits | AWAITING_PONG) & ~PING_QUEUED;
  }

  /**
   * Last write noticed: when a sample of the transport's counter first showed bytes our own
   * frames do not explain (the attach time when writes are not tracked).
   */
  get lastWriteAt(): number {
    return this.extra === undefined ? this.attachedAt : this.extra.lastWriteAt;
  }

  /** A ping is outstanding and nothing was read since it was sent. */
  get unanswered(): boolean {
    return (this.bits & AWAITING_PONG) !== 0 && this.lastReadAt < this.lastPing.sentAt;
  }

  /** A read event at `now` (a message or ping listener): written in place, no allocation after the first. */
  read(now: number): void {
    this.lastReadAt = now;
    this.bits |= READ_SINCE_MARK;
  }

  /**
   * A pong at `now` (the poll's shared reading, see poll-reading.ts), `frameBytes` long on the
   * wire. Returns true when it answers our outstanding ping (its round trip is recorded), false
   * when it is unsolicited or something else answered first. Its own bytes go into the byte
   * counter's mark without reading the counter (a call into the transport, for every pong):
   * talk after it then counts from the pong on (see the module comment).
   */
  pong(now: number, frameBytes: number): boolean {
    const answers = this.unanswered;
    const reading = readingAt(now);
    this.lastRead = reading;
    let bits = this.bits & ~OWN_READING;
    // Its bytes are in the mark: bytes beyond them at the next sample are talk, and the pong
    // (`lastReadAt`) is a time known to precede it.
    if ((bits & NO_COUNTER) === 0) bits = (bits & FLAG_MASK) | (markOf((bits >>> FLAG_BITS) + frameBytes) << FLAG_BITS);
    if (!answers) {
      this.bits = bits;
      return false;
    }
    this.rttUs = Math.round((now - this.lastPing.sentAt) * 1_000);
    this.bits = bits & ~(AWAITING_PONG | PING_QUEUED);
    return true;
  }

  /**
   * Samples the transport's byte counter. Bytes that arrived since the last sample, with no read
   * event recorded since, are a read whatever the listeners on the socket (a user's
   * `removeAllListeners()` takes ours too): a peer that sends anything is seen alive. Its time
   * is the latest known to precede them: the last sample, or the outstanding ping they answer;
   * and the record is {@link Connection.talking} until a sample finds nothing new.
   */
  noticeReads(now: number): void {
    const bits = this.bits;
    if ((bits & NO_COUNTER) !== 0) return;
    const mark = markOf(bytesReadOf(this.socket));
    if (mark === bits >>> FLAG_BITS) {
      // Nothing new. `sampled` stays as it was, an earlier time known to precede whatever comes
      // next: a quiet record's look then writes only its flags (no pointer store).
      this.bits = bits & ~(READ_SINCE_MARK | TALKING);
      return;
    }
    const before = this.sampled;
    this.sampled = readingAt(now);
    const unseen = (bits & READ_SINCE_MARK) === 0;
    this.bits = (bits & FLAG_MASK & ~(READ_SINCE_MARK | TALKING)) | (unseen ? TALKING : 0) | (mark << FLAG_BITS);
    if (!unseen) return;
    // They came after the last sample (the attach, if none since); an outstanding ping went out
    // after that sample too (a record is sampled right before its ping), so they answer it.
    const after = (bits & AWAITING_PONG) !== 0 ? this.lastPing.reading : before;
    if (after !== undefined && after.at > this.lastReadAt) {
      this.lastRead = after;
      this.bits &= ~OWN_READING;
    }
  }

  /** The earliest time anything is due on this connection; Infinity when nothing ever is. */
  dueAt(o: ResolvedOptions): number {
    let due = Infinity;
    if (o.pingIntervalMs < Infinity) {
      if ((this.bits & AWAITING_PONG) !== 0) {
        due = this.lastPing.sentAt + o.pongTimeoutMs;
      } else {
        due = this.lastReadAt + o.pingIntervalMs;
        // A talking peer is sampled every half interval (less the slack the rounding below may add).
        if ((this.bits & TALKING) !== 0) {
          const sampledAt = this.sampled === undefined ? this.attachedAt : this.sampled.at;
          due = Math.min(due, sampledAt + (o.pingIntervalMs - o.pingSlackMs) / 2);
        }
        // Round up to the slack grid, so that pings due close together share one wheel pass.
        if (o.pingSlackMs > 0) due = Math.max(due, Math.ceil(due / o.pingSlackMs) * o.pingSlackMs);
      }
    }
    const x = this.extra;
    if (x === undefined) return due;
    const lastReadAt = this.lastReadAt;
    if (o.readerIdleMs < Infinity) due = Math.min(due, Math.max(lastReadAt, x.reader) + o.readerIdleMs);
    if (o.writerIdleMs < Infinity) due = Math.min(due, Math.max(x.lastWriteAt, x.writer) + o.writerIdleMs);
    if (o.allIdleMs < Infinity) due = Math.min(due, Math.max(lastReadAt, x.lastWriteAt, x.all) + o.allIdleMs);
    if (o.keepaliveMs < Infinity) due = Math.min(due, x.lastWriteAt + o.keepaliveMs);
    return Math.min(due, x.firstMessageBy, x.closeAt, x.drainCheckAt);
  }

  /** A copy for the caller: later activity does not change it. */
  snapshot(): LivenessState {
    return {
      attachedAt: this.attachedAt,
      lastReadAt: this.lastReadAt,
      lastWriteAt: this.lastWriteAt,
      tracksWrites: this.extra?.tracks === true,
      // Anything received since the ping answers it; the next check clears the flag lazily.
      awaitingPong: this.unanswered,
      lastPingAt: this.pingsSent === 0 ? undefined : this.lastPing.sentAt,
      rttMs: this.rttUs < 0 ? undefined : this.rttUs / 1_000,
      pingsSent: this.pingsSent,
    };
  }
}

Object.defineProperty(Connection.prototype, 'extra', { value: undefined, writable: true });

/** A record that also keeps write and idle marks, for the options that need them. */
export class MarkedConnection<S extends WebSocket = WebSocket> extends Connection<S> {
  override readonly extra = new WriteAndIdle(this.attachedAt);
}
