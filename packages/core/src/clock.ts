/**
 * Clocks: where the wheel reads the time, and how it asks to be woken up.
 *
 * A {@link Clock} only tells the time. A {@link DrivingClock} also knows how to wake a wheel at a
 * given time: the {@link ManualClock} does it synchronously while it is advanced, and the
 * {@link SystemClock} does it with one native `setTimeout` per wheel (see `native-driver.ts`).
 */

/** A source of time in milliseconds. It must never go backwards. */
export interface Clock {
  /** The current time in milliseconds. Only differences matter; the origin is the clock's own. */
  now(): number;
}

/**
 * The one wake-up a wheel needs: "call me at `atMs`". A wheel holds exactly one driver, and a
 * driver holds at most one pending wake-up; arming again replaces it.
 */
export interface WakeupDriver {
  /** Wake the wheel once at (not before) `atMs`, in the clock's milliseconds. Replaces any earlier arming. */
  arm(atMs: number): void;
  /** Cancel the pending wake-up, if any. */
  disarm(): void;
  /** Whether the pending wake-up should keep the process alive (Node's ref/unref). */
  setRef(ref: boolean): void;
  /** Release everything; the driver is not used again. */
  close(): void;
}

/** A clock that can also drive a wheel. Clocks that are not driving get the native driver. */
export interface DrivingClock extends Clock {
  createDriver(wake: () => void): WakeupDriver;
}

/** True when `clock` brings its own driver. */
export function isDrivingClock(clock: Clock): clock is DrivingClock {
  return typeof (clock as Partial<DrivingClock>).createDriver === 'function';
}

/**
 * The default clock: monotonic milliseconds from `performance.now()`, so changes to the wall
 * clock (NTP steps, a user changing the date) never move a timer.
 *
 * It reads `globalThis.performance` on every call rather than capturing it once, so that
 * `vi.useFakeTimers()` / `sinon.useFakeTimers()` installed after the wheel was built still take
 * effect. When the function behind `performance.now` is swapped (fake timers installed or
 * uninstalled), the clock re-bases so that its readings stay continuous and never go backwards.
 */
export class SystemClock implements Clock {
  private source: (() => number) | undefined;
  private sourceOffset = 0;
  private last = 0;

  now(): number {
    const perf = globalThis.performance;
    const source = perf.now;
    if (source !== this.source) this.rebase(source, perf);
    let t = source.call(perf) + this.sourceOffset;
    // A swapped source that runs behind must not move time backwards.
    if (t < this.last) t = this.last;
    this.last = t;
    return t;
  }

  private rebase(source: () => number, perf: typeof globalThis.performance): void {
    const first = this.source === undefined;
    this.source = source;
    this.sourceOffset = first ? 0 : this.last - source.call(perf);
  }
}

/** The process-wide system clock instance that wheels use unless given another. */
export const systemClock: Clock = new SystemClock();
