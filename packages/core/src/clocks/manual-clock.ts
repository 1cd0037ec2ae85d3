/**
 * ManualClock: a driving clock that tests move by hand, firing the wheel synchronously.
 * Must not depend on: real time or native timers (clock.ts's contract only).
 */
import type { DrivingClock, WakeupDriver } from './clock.js';
import { requireMs } from '../kit/options-kit.js';

/** Wake-ups at one instant, across the clock's wheels, before `advance` assumes an infinite loop. */
const MAX_WAKES_WITHOUT_PROGRESS = 100_000;

/**
 * A clock that moves only when told to. Tests and fixed-step game loops use it to make timers
 * deterministic: the same calls always fire the same callbacks in the same order.
 *
 * {@link ManualClock.advance} moves time through every due expiry in order, so each callback
 * sees `clock.now()` equal to its own expiry, and timers scheduled by callbacks inside the
 * window fire within the same call (as sinon's `clock.tick` does).
 *
 * @example
 * ```ts
 * const clock = new ManualClock(0);
 * const wheel = new TimingWheel({ clock });
 * wheel.schedule(100, () => console.log('fired at', clock.now())); // fired at 100
 * clock.advance(250);
 * ```
 */
export class ManualClock implements DrivingClock {
  private nowMs: number;
  private readonly drivers = new Set<ManualDriver>();
  private advancing = false;

  /** @param startMs - the initial reading of `now()`, 0 by default */
  constructor(startMs = 0) {
    this.nowMs = requireMs(startMs, 'startMs', -Number.MAX_VALUE);
  }

  now(): number {
    return this.nowMs;
  }

  /** Used by wheels built on this clock (the `DrivingClock` contract, `@tickwheel/core/internal`). */
  createDriver(wake: () => void): WakeupDriver {
    const driver = new ManualDriver(this.drivers, wake);
    this.drivers.add(driver);
    return driver;
  }

  /**
   * Moves time forward by `ms`, firing every timer that comes due on the way, in order.
   *
   * A callback that throws does not stop the others; once time has reached its target the
   * errors are rethrown (one as itself, several as an AggregateError).
   *
   * @throws RangeError when `ms` is negative, NaN or infinite; Error when called re-entrantly from a callback
   */
  advance(ms: number): void {
    requireMs(ms, 'ms');
    const target = this.nowMs + ms;
    if (target === Infinity) throw new RangeError(`ms must keep the clock finite: now() is ${this.nowMs}, got ${ms}`);
    this.advanceTo(target);
  }

  /**
   * Moves time forward to `timeMs` (absolute), firing due timers on the way. See {@link ManualClock.advance}.
   *
   * @throws RangeError when `timeMs` is earlier than `now()`
   */
  advanceTo(timeMs: number): void {
    requireMs(timeMs, 'timeMs', -Number.MAX_VALUE);
    if (timeMs < this.nowMs) {
      throw new RangeError(`timeMs must not be earlier than now() (${this.nowMs}), got ${timeMs}`);
    }
    if (this.advancing) {
      throw new Error('ManualClock.advance() cannot be called from a timer callback while the clock is advancing');
    }
    this.advancing = true;
    const errors: unknown[] = [];
    let wakesHere = 0;
    try {
      for (;;) {
        const next = this.earliestDriver();
        if (next === undefined || next.armedAt > timeMs) break;
        if (next.armedAt > this.nowMs) {
          this.nowMs = next.armedAt;
          wakesHere = 0;
        } else if (++wakesHere > MAX_WAKES_WITHOUT_PROGRESS) {
          // Wheels re-arming each other for the same instant; each wheel's own loopLimit only sees one pass.
          errors.push(
            new Error(
              `ManualClock: aborting after ${MAX_WAKES_WITHOUT_PROGRESS} wake-ups at ${this.nowMs} ms, assuming an infinite loop between wheels`,
            ),
          );
          break;
        }
        next.armedAt = Infinity;
        try {
          next.wake();
        } catch (error) {
          errors.push(error);
        }
      }
      this.nowMs = timeMs;
    } finally {
      this.advancing = false;
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} timer callbacks threw`);
  }

  /**
   * Advances to the next pending wake-up of any wheel on this clock, however far away, and
   * fires what is due there. Returns false when nothing is pending.
   */
  runNext(): boolean {
    const next = this.earliestDriver();
    if (next === undefined) return false;
    this.advanceTo(Math.max(this.nowMs, next.armedAt));
    return true;
  }

  private earliestDriver(): ManualDriver | undefined {
    let earliest: ManualDriver | undefined;
    for (const driver of this.drivers) {
      if (driver.armedAt !== Infinity && (earliest === undefined || driver.armedAt < earliest.armedAt)) {
        earliest = driver;
      }
    }
    return earliest;
  }
}

/** A wheel's wake-up on a ManualClock: just the time it wants, read by `advance`. */
class ManualDriver implements WakeupDriver {
  armedAt = Infinity;

  constructor(
    private readonly registry: Set<ManualDriver>,
    readonly wake: () => void,
  ) {}

  arm(atMs: number): void {
    this.armedAt = atMs;
  }

  disarm(): void {
    this.armedAt = Infinity;
  }

  setRef(): void {
    // A manual clock never holds the process open.
  }

  close(): void {
    this.armedAt = Infinity;
    this.registry.delete(this);
  }
}
