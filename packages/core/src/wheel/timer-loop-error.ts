/**
 * TimerLoopError: what a wheel reports when timers keep re-arming for the tick being fired.
 */

/**
 * Thrown (or given to `onError`) when timers keep re-arming for the tick being fired: after
 * `loopLimit` rounds of it in one pass the wheel cancels them, as sinon's fake timers abort
 * "after running N timers, assuming an infinite loop!".
 */
export class TimerLoopError extends Error {
  override readonly name = 'TimerLoopError';

  constructor(
    /** The limit that was exceeded. */
    readonly loopLimit: number,
    /** The clock time of the tick the timers kept re-arming for. */
    readonly atMs: number,
    /** How many timers were cancelled. */
    readonly cancelled: number,
  ) {
    super(
      `Aborting after ${loopLimit} rounds of timers re-arming for the same tick (${atMs} ms), assuming an infinite loop: ` +
        `${cancelled} timer(s) cancelled. Raise the wheel's loopLimit option if this is intended.`,
    );
  }
}
