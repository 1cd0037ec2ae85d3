/**
 * record-flags: the packed flag word of a connection record: its flags in the low bits, the byte counter's mark above.
 *
 * One small integer per record instead of a boolean field per flag and a number field for the
 * mark: V8 stores a small integer (a Smi, 31 bits on every build) in the object itself, so the
 * flags and the mark cost one field, and setting a flag allocates nothing.
 */

/** A ping is outstanding: sent at `lastPingAt`, and (unless `lastReadAt` moved past it) nothing received since. */
export const AWAITING_PONG = 1;
/** Its pong deadline was checked late; it is checked again after the next I/O poll. */
export const KILL_PENDING = 2;
/**
 * A read event (a listener) wrote `lastReadAt` since the byte counter was last sampled, so the
 * sample must not overwrite that exact time with an earlier bound.
 */
export const READ_SINCE_MARK = 4;
/** The controller let go of it (closed, removed, dead, stopped); it is never filed again. */
export const DETACHED = 8;
/** `lastRead` is this record's own `Reading` (a read event wrote it), rewritten in place by the next. */
export const OWN_READING = 16;
/** The socket has no byte counter to sample (a socket not open yet, or a stand-in without one). */
export const NO_COUNTER = 32;
/**
 * The last ping went out behind our own queued data (`bufferedAmount` > 0): its pong deadline
 * starts when ws reports it written, not at the pass (see liveness-check.ts).
 */
export const PING_QUEUED = 64;
/**
 * The last sample of the byte counter found bytes that no read event timed: the peer talks, and
 * is looked at every half interval so that its talk keeps it from being pinged (see connection.ts).
 */
export const TALKING = 128;
/** The flags take the low bits; the byte counter's mark the bits above them. */
export const FLAG_BITS = 8;
/** Every flag bit set. */
export const FLAG_MASK = 2 ** FLAG_BITS - 1;
/**
 * The mark keeps the counter modulo 2^22, so that the word stays a 31-bit Smi. A peer that sent a
 * multiple of 4 MiB between two samples, and no frame a listener saw, is taken for quiet once:
 * it is pinged, and answers.
 */
const MARK_MODULUS = 2 ** 22;

/** `read` (>= 0), the transport's `bytesRead`, as kept above the flags. */
export function markOf(read: number): number {
  return read % MARK_MODULUS;
}
