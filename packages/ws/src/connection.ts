/**
 * The per-connection record of a heartbeat: last read and write, pings, pong deadline and idle marks.
 */
import type { WebSocket } from 'ws';
import type { DueEntry, DueLink } from './due-schedule.js';
import type { ResolvedOptions } from './options.js';
import type { LimitMarks } from './limits.js';
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

/**
 * Bytes handed to the socket's transport so far (`bytesWritten` of ws's `net.Socket`: written or
 * queued in it), or -1 when there is none to read.
 */
export function bytesWrittenOf(socket: WebSocket): number {
  const transport = (socket as { _socket?: { bytesWritten?: unknown } | null })._socket;
  const written = transport?.bytesWritten;
  return typeof written === 'number' ? written : -1;
}

/**
 * How far the socket's transport is in passing our data to the kernel: `done`, the bytes of
 * writes that completed (`bytesWritten` less what is still queued in the stream), and `inFlight`,
 * what the write being performed still has to pass (libuv's `writeQueueSize`, which shrinks as a
 * large write goes out piece by piece, while the stream counts it as queued until it ends).
 * Undefined when the socket has no transport to read.
 */
export interface WriteProgress {
  done: number;
  inFlight: number;
}

/** See {@link WriteProgress}. */
export function writeProgressOf(socket: WebSocket): WriteProgress | undefined {
  const transport = (
    socket as {
      _socket?: {
        bytesWritten?: unknown;
        writableLength?: unknown;
        _handle?: { writeQueueSize?: unknown } | null;
      } | null;
    }
  )._socket;
  const written = transport?.bytesWritten;
  if (typeof written !== 'number') return undefined;
  const queued = transport!.writableLength;
  const inFlight = transport!._handle?.writeQueueSize;
  return {
    done: typeof queued === 'number' ? written - queued : written,
    inFlight: typeof inFlight === 'number' ? inFlight : 0,
  };
}

/** Whether the transport passed anything to the kernel between `before` and `after`. */
export function wroteSince(before: WriteProgress, after: WriteProgress): boolean {
  return after.done > before.done || (after.done === before.done && after.inFlight < before.inFlight);
}

/**
 * The size of a control frame the heartbeat's side sends with `payload` bytes (RFC 6455 §5.2:
 * two header bytes, and a 4-byte masking key from a client): our pings, and ws's automatic pongs.
 */
export function controlFrameBytes(socket: WebSocket, payload: number): number {
  return (socket as { _isServer?: unknown })._isServer === false ? 6 + payload : 2 + payload;
}

/**
 * The size of a data frame the heartbeat's side sends with `payload` bytes, unfragmented (RFC 6455
 * §5.2: 2 header bytes, 2 or 8 more for a longer length, a 4-byte masking key from a client): our
 * keepalives.
 */
export function dataFrameBytes(socket: WebSocket, payload: number): number {
  const length = payload < 126 ? 0 : payload < 65_536 ? 2 : 8;
  return controlFrameBytes(socket, payload) + length;
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
/** `lastRead` is this record's own {@link Reading} (a read event wrote it), rewritten in place by the next. */
const OWN_READING = 16;
/** The socket has no byte counter to sample (a socket not open yet, or a stand-in without one). */
const NO_COUNTER = 32;
/**
 * The last ping went out behind our own queued data (`bufferedAmount` > 0): its pong deadline
 * starts when ws reports it written, not at the pass (see liveness-check.ts).
 */
const PING_QUEUED = 64;
/** The flags take the low bits of `bits`; the byte counter's mark the bits above them. */
const FLAG_BITS = 7;
/**
 * The mark keeps the counter modulo 2^24, so that `bits` stays a small integer (31-bit Smis on
 * every V8 build) stored in the record itself. A peer that sent a multiple of 8 MiB between two
 * samples, and no frame a listener saw, is taken for quiet once: it is pinged, and answers.
 */
const MARK_MODULUS = 2 ** 23;

/**
 * A clock reading that records point to instead of holding the time themselves: a field holding a
 * fractional double is a 16-byte number box per record (V8 keeps no unboxed doubles), and a field
 * made tagged gets a fresh box per write. The pongs of one I/O poll, and the reads a pass notices,
 * share one (see {@link readingAt}); a record that hears reads one by one (a `'message'`
 * listener, with reader idleness) owns one and rewrites it in place, so no read allocates.
 */
export class Reading {
  constructor(public at: number) {}
}

let lastShared = new Reading(NaN);

/**
 * The shared reading of time `now`: the one handed out last when it is of the same time (every
 * record of a pass, every pong of a poll), else a new one. One allocation per pass or poll, none
 * per record.
 */
export function readingAt(now: number): Reading {
  if (lastShared.at !== now) lastShared = new Reading(now);
  return lastShared;
}

/**
 * One pass's pings: the clock reading they count as sent at, shared by every record pinged in
 * the pass. A record keeps a reference to it instead of a time of its own: one pointer write per
 * ping, and no number box per record.
 * `sentAt` is the pass's reading until the pass ends, then the fresh reading taken after its last
 * ping (see `LivenessCheck.endPass`), which every record of the pass sees at once.
 *
 * `owner` is the heartbeat whose pass it is: a record's owner is its last ping's, so a record
 * found in a socket's slot (socket-record.ts) is known to be this heartbeat's or another's with
 * no field of its own for it. A record not pinged yet points at its owner's pass that never
 * happened ({@link PingPass.never}, `sentAt` NaN).
 */
export class PingPass {
  constructor(
    public sentAt: number,
    readonly owner: object | undefined = undefined,
  ) {}

  /** The "no ping yet" pass of `owner`, for its records' `lastPing` until their first ping. */
  static never(owner: object | undefined): PingPass {
    return new PingPass(NaN, owner);
  }
}

/** The "no ping yet" of records that belong to no heartbeat (built on their own, as in tests). */
const NEVER_PINGED = PingPass.never(undefined);

/**
 * What only writer/all idleness, `trackWrites` and the connection limits need, in an object of
 * its own so that the default heartbeat (pings only) does not carry these fields per connection.
 *
 * Writes are seen the way pings see reads: by the transport's byte counter (`bytesWritten`),
 * sampled when the connection comes due, so nothing is patched onto the socket and no listener
 * runs per `send()`. The heartbeat's own frames (its pings, and ws's automatic pongs to the
 * peer's pings) are counted in `ownBytes` as they are sent and taken off the next sample, so
 * they are not write activity.
 */
export class WriteAndIdle implements LimitMarks {
  /** Connection limits (limits.ts); all Infinity/NaN while off. */
  firstMessageBy = Infinity;
  closeAt = Infinity;
  overSince = NaN;
  drainCheckAt = Infinity;
  /** The transport's `bytesWritten` at the last sample; -1 while writes are not observed (or there is no counter). */
  writeMark = -1;
  /** Bytes of our own frames sent since the last sample, not write activity. */
  ownBytes = 0;
  /** When each idle kind last fired; -Infinity until it does. */
  reader = -Infinity;
  writer = -Infinity;
  all = -Infinity;

  constructor(public lastWriteAt: number) {}

  /** Starts observing writes on `socket` (see `trackWrites`): samples its counter now. */
  track(socket: WebSocket): void {
    this.writeMark = bytesWrittenOf(socket);
  }

  /** Whether writes are observed (a counter was there to sample). */
  get tracks(): boolean {
    return this.writeMark >= 0;
  }

  /**
   * Samples the counter: bytes written since the last sample beyond our own frames are a write
   * noticed at `now`. Own frames not yet in the counter (queued in ws behind a compression) stay
   * in `ownBytes` for the next sample.
   */
  noticeWrites(socket: WebSocket, now: number): void {
    const written = bytesWrittenOf(socket);
    if (written < 0 || this.writeMark < 0) return;
    const theirs = written - this.writeMark - this.ownBytes;
    this.writeMark = written;
    if (theirs > 0) {
      this.ownBytes = 0;
      this.lastWriteAt = now;
    } else this.ownBytes = -theirs;
  }
}

/**
 * What the heartbeat knows about one connection. Kept in a hidden slot on the socket (a private
 * class field, see socket-record.ts), and filed in the controller's {@link DueSchedule} under the
 * next time anything is due (`prev`/`next` are its links there; through them the controller also
 * finds every record it has). Activity only writes fields here; the schedule moves it when it
 * comes due, or when a pong answers its ping.
 *
 * Few fields and no number box of its own, because there is one per connection: the flags and
 * the byte counter's mark share one small integer, the last read and the last ping are
 * references to shared readings ({@link Reading}, {@link PingPass}, whose `owner` also tells
 * whose record it is), and `attachedAt` is a whole ms (sizes in benchmarks/README.md).
 */
export class Connection<S extends WebSocket = WebSocket> implements DueEntry {
  prev: DueLink | undefined = undefined;
  next: DueLink | undefined = undefined;
  /** The last read (`lastReadAt` is its time); undefined until the first, which leaves it at `attachedAt`. */
  private lastRead: Reading | undefined = undefined;
  /**
   * The pass that sent the last ping (its `sentAt` is this record's `lastPingAt`); before the
   * first, the owner's {@link PingPass.never}.
   */
  lastPing: PingPass;
  /** Flags (AWAITING_PONG ... NO_COUNTER) in the low FLAG_BITS, the byte counter's mark above them. */
  private bits: number;
  /**
   * Round trip of the last answered ping in whole microseconds, -1 before the first: a small
   * integer is stored in the object itself, a fractional ms figure would be a boxed double.
   */
  rttUs = -1;
  pingsSent = 0;
  /**
   * Only with writer/all idleness, reader idleness or `trackWrites` (a {@link MarkedConnection});
   * otherwise undefined, read from the prototype: the default record has no field for it.
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
    this.bits = read < 0 ? NO_COUNTER : markOf(read) << FLAG_BITS;
  }

  /** When anything was last read (a message, ping or pong; `attachedAt` until then). */
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

  /** The transport's `bytesRead` (modulo 2^23) when last sampled; -1 when the socket has no readable counter. */
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
   * A pong at `now` (the poll's shared reading, see poll-reading.ts). Returns true when it
   * answers our outstanding ping (its round trip is recorded), false when it is unsolicited or
   * something else answered first.
   */
  pong(now: number): boolean {
    const answers = this.unanswered;
    this.sharedRead(now);
    if (!answers) {
      this.bits |= READ_SINCE_MARK;
      return false;
    }
    this.rttUs = Math.round((now - this.lastPing.sentAt) * 1_000);
    this.bits = (this.bits | READ_SINCE_MARK) & ~(AWAITING_PONG | PING_QUEUED);
    return true;
  }

  /**
   * Samples the transport's byte counter. Bytes that arrived since the last sample, with no read
   * event recorded since, are a read noticed now: whatever the listeners on the socket (a user's
   * `removeAllListeners()` takes ours too), a peer that sends anything is seen alive.
   */
  noticeReads(now: number): void {
    const bits = this.bits;
    if ((bits & NO_COUNTER) !== 0) return;
    const mark = markOf(bytesReadOf(this.socket));
    if (mark !== bits >>> FLAG_BITS && (bits & READ_SINCE_MARK) === 0) this.sharedRead(now);
    this.bits = (this.bits & (2 ** FLAG_BITS - 1) & ~READ_SINCE_MARK) | (mark << FLAG_BITS);
  }

  /** The earliest time anything is due on this connection; Infinity when nothing ever is. */
  dueAt(o: ResolvedOptions): number {
    let due = Infinity;
    if (o.pingIntervalMs < Infinity) {
      if ((this.bits & AWAITING_PONG) !== 0) {
        due = this.lastPing.sentAt + o.pongTimeoutMs;
      } else {
        due = this.lastReadAt + o.pingIntervalMs;
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

  /** A read at `now` that other records share (a poll's pongs, a pass's noticed reads). */
  private sharedRead(now: number): void {
    this.lastRead = readingAt(now);
    this.bits &= ~OWN_READING;
  }
}

Object.defineProperty(Connection.prototype, 'extra', { value: undefined, writable: true });

/** A record that also keeps write and idle marks, for the options that need them. */
export class MarkedConnection<S extends WebSocket = WebSocket> extends Connection<S> {
  override readonly extra = new WriteAndIdle(this.attachedAt);
}

/** `read` (>= 0) as kept in `bits`. */
function markOf(read: number): number {
  return read % MARK_MODULUS;
}
