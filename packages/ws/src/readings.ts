/**
 * readings: clock readings that connection records point to instead of holding a time each (Reading, PingPass).
 *
 * A field holding a fractional double is a 16-byte number box per record (V8 keeps no unboxed
 * doubles), and a field made tagged gets a fresh box per write. So records point to shared
 * readings: the pongs of one I/O poll, and the samples a pass takes, share one (see
 * {@link readingAt}); the pings of one pass share one {@link PingPass}.
 */

/**
 * A clock reading that records point to. A record that hears reads one by one (a `'message'`
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
  /** {@link PingPass.reading}'s, made on first use. */
  private sent: Reading | undefined = undefined;

  constructor(
    public sentAt: number,
    readonly owner: object | undefined = undefined,
  ) {}

  /** The "no ping yet" pass of `owner`, for its records' `lastPing` until their first ping. */
  static never(owner: object | undefined): PingPass {
    return new PingPass(NaN, owner);
  }

  /** `sentAt` as a {@link Reading}, one for every record of the pass (a read known to come after the ping). */
  get reading(): Reading {
    let sent = this.sent;
    if (sent === undefined || sent.at !== this.sentAt) this.sent = sent = new Reading(this.sentAt);
    return sent;
  }
}
