/**
 * Connection limits: which of the first-message deadline, the lifetime and the slow-consumer cut-off a check finds due.
 *
 * The deadlines people hand-write around a ws server with a timer per connection, kept as marks
 * on the heartbeat's record instead and checked when the record comes due, so they ride on the
 * shared due-time handles like pings and idleness.
 */
import type { ResolvedOptions } from './options.js';
import type { LimitKind } from './types.js';

/** A connection's limit marks (see {@link LimitMarks.start}); every time is on the wheel's clock. */
export interface LimitMarks {
  /** When a connection that has received no data message is closed; Infinity once one arrived (or admitted, or off). */
  firstMessageBy: number;
  /** When the connection's lifetime ends; Infinity when off. */
  closeAt: number;
  /** Since when `bufferedAmount` has been seen above `maxBufferedBytes`; NaN while it is not (or off). */
  overSince: number;
  /** When `bufferedAmount` is looked at next; Infinity when off. */
  drainCheckAt: number;
}

/** Sets `marks` for a connection attached at `attachedAt`; `random` draws the lifetime's jitter (0 <= r < 1). */
export function startLimits(
  marks: LimitMarks,
  attachedAt: number,
  o: ResolvedOptions,
  random: () => number = Math.random,
): void {
  marks.firstMessageBy = attachedAt + o.firstMessageMs;
  // Uniform in [max × (1 − jitter), max]: 1 − r is in (0, 1].
  marks.closeAt = attachedAt + o.maxLifetimeMs * (1 - o.lifetimeJitter * (1 - random()));
  marks.overSince = NaN;
  marks.drainCheckAt = attachedAt + o.drainTimeoutMs;
}

/**
 * The limit reached at `now`, or undefined. `bufferedAmount` is sampled when a look is due: a
 * connection above `maxBufferedBytes` at two looks `drainTimeoutMs` apart is a slow consumer.
 */
export function dueLimit(
  marks: LimitMarks,
  bufferedAmount: number,
  now: number,
  o: ResolvedOptions,
): LimitKind | undefined {
  if (now >= marks.drainCheckAt) {
    if (!(bufferedAmount > o.maxBufferedBytes)) {
      marks.overSince = NaN;
      marks.drainCheckAt = now + o.drainTimeoutMs;
    } else if (Number.isNaN(marks.overSince)) {
      marks.overSince = now;
      marks.drainCheckAt = now + o.drainTimeoutMs;
    } else if (now - marks.overSince >= o.drainTimeoutMs) return 'slowConsumer';
    else marks.drainCheckAt = marks.overSince + o.drainTimeoutMs;
  }
  if (now >= marks.closeAt) return 'lifetime';
  if (now >= marks.firstMessageBy) return 'firstMessage';
  return undefined;
}
