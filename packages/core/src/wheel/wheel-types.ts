/**
 * The public option and statistics types of the `TimingWheel`.
 * Must not depend on: runtime code (types only).
 */
import type { Clock } from '../clocks/clock.js';
import type { TimerHandle } from './timer-handle.js';

/** Options of the `TimingWheel` constructor; every one is optional. */
export interface TimingWheelOptions {
  /** The resolution: timers fire at the first multiple of `tickMs` at or after their expiry. Any positive finite number. Default 1. */
  tickMs?: number;
  /** Buckets per level, a power of two from 2 to 65536. Default 64. */
  wheelSize?: number;
  /** Where time comes from. Default: the monotonic {@link SystemClock}. Pass a `ManualClock` for tests and game loops. */
  clock?: Clock;
  /** Receives errors thrown by callbacks, and `TimerLoopError`s. Default: rethrown after the pass. */
  onError?: (error: unknown, handle: TimerHandle) => void;
  /** Rounds of timers re-arming for the tick being fired, in one pass, before they are cancelled as an infinite loop. Default 1000. */
  loopLimit?: number;
  /**
   * With the native driver: when its timer fires this late (ms) or later because the event loop
   * was blocked, yield one loop turn before expiring timers so that I/O completed during the
   * block is delivered first. `Infinity` disables it. Default 10.
   */
  yieldToIoWhenLateMs?: number;
}

/** Counters of a wheel's life, from `wheel.stats()`. */
export interface WheelStats {
  /** Timers waiting to fire (including those too far out to ever fire). */
  pending: number;
  /** Timers scheduled, counting re-arms of fired or cancelled handles by `refresh()`. */
  scheduled: number;
  /** Callbacks run. */
  fired: number;
  /** Pending timers cancelled (including by `close()` and by the loop limit). */
  cancelled: number;
  /** Times the driver woke the wheel (native timer callbacks, on the system clock). */
  wakeups: number;
  /** Entries moved from a coarse bucket to a finer one. */
  cascaded: number;
  /** Entries whose bucket came up after `refresh()` had pushed them later, and were re-filed. */
  refiled: number;
  /** Levels in use (created on demand as delays need them). */
  levels: number;
}
