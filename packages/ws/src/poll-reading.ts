/**
 * PollReading: one clock reading shared by the pongs that one I/O poll delivers.
 *
 * A heartbeat pass pings a few hundred connections at once, and their pongs come back together:
 * libuv's poll phase reads every ready socket in one go, running the `'pong'` listener once per
 * socket. A fresh reading of the system clock costs as much as the rest of the listener, so
 * on the system clock the first pong of a poll reads the clock and the pongs after it in the
 * same poll reuse that reading; a `setImmediate` (the check phase, right after the poll) drops
 * it. The pongs of one poll are therefore stamped up to the poll's length early (`lastReadAt`,
 * `rttMs`); a reading older than the ping it would answer is never used (see `at`). The drop
 * takes one fresh reading and hands it to `onPollEnd`: the liveness check's proof that a poll
 * ran after a pong deadline must not be stamped early with the rest (liveness-check.ts).
 *
 * On any other clock (a `ManualClock` in tests, a user's own) every call reads the clock.
 */
import { SystemClock, freshNow, type Clock } from '@tickwheel/core';

/** Captured before any test installs fake timers: the drop must run after the real poll. */
const realSetImmediate = globalThis.setImmediate;

/** See the module comment. */
export class PollReading {
  /** The poll's reading; NaN when there is none. */
  private reading = NaN;
  private readonly perPoll: boolean;
  private readonly drop = (): void => {
    this.reading = NaN;
    this.onPollEnd(freshNow(this.clock));
  };

  /**
   * @param clock - the wheel's clock
   * @param onPollEnd - called with a fresh reading after each poll whose reads used this
   *   (on the system clock; on another clock, with each reading `at` takes)
   */
  constructor(
    private readonly clock: Clock,
    private readonly onPollEnd: (now: number) => void,
  ) {
    this.perPoll = clock instanceof SystemClock;
  }

  /**
   * The time of a read in this poll: the poll's reading, or a fresh one when there is none yet
   * or the poll's is older than `notBefore` (the ping being answered was sent after it).
   */
  at(notBefore: number): number {
    const reading = this.reading;
    if (reading >= notBefore) return reading;
    const now = freshNow(this.clock);
    if (this.perPoll) {
      if (Number.isNaN(reading)) realSetImmediate(this.drop);
      this.reading = now;
    } else this.onPollEnd(now);
    return now;
  }
}
