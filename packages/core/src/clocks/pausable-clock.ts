/**
 * PausableClock: game time that stops and resumes, driven by one timer on an outer wheel.
 */
import type { DrivingClock, WakeupDriver } from './clock.js';
import type { TimerHandle } from '../wheel/timer-handle.js';
import type { TimingWheel } from '../wheel/timing-wheel.js';

/**
 * A clock that can be stopped: "game time" for one {@link TimerSet}, driven by ONE timer on an
 * outer wheel.
 *
 * It reads `outer.clock.now() - offset`, where `offset` is the total time spent paused. A
 * `TimerSet` keeps its timers on a private wheel built on this clock, so they are measured in
 * unpaused time. That wheel's single wake-up ("call me at virtual time T") becomes one handle on
 * the outer wheel, due at real time `T + offset`.
 *
 * Pausing cancels that one handle and freezes the reading; resuming adds the paused span to
 * `offset` and re-arms the handle. Both are O(1) however many timers the set holds, and no
 * timer's remaining time changes while paused, because virtual time does not move.
 */
export class PausableClock implements DrivingClock, WakeupDriver {
  /** Real time spent paused so far (ms); virtual = real - offset while running. */
  private offset = 0;
  /** The virtual reading while paused. */
  private frozenAt = 0;
  private pausedFlag = false;
  /** Readings never go below this: the last reading, or the virtual time the outer handle was due. */
  private floor = -Infinity;
  /** The virtual time the inner wheel asked to be woken at; Infinity when it did not. */
  private armedAt = Infinity;
  private handle: TimerHandle | undefined;
  private refWanted = true;
  private wake: (() => void) | undefined;

  constructor(private readonly outer: TimingWheel) {}

  /** Virtual milliseconds: the outer clock's reading minus the time spent paused; frozen while paused. */
  now(): number {
    if (this.pausedFlag) return this.frozenAt;
    let t = this.outer.clock.now() - this.offset;
    if (t < this.floor) t = this.floor;
    this.floor = t;
    return t;
  }

  get paused(): boolean {
    return this.pausedFlag;
  }

  /** Stops virtual time. O(1). Returns false if it was already stopped. */
  pause(): boolean {
    if (this.pausedFlag) return false;
    this.frozenAt = this.now();
    this.pausedFlag = true;
    this.handle?.cancel();
    return true;
  }

  /** Restarts virtual time where it stopped. O(1). Returns false if it was running. */
  resume(): boolean {
    if (!this.pausedFlag) return false;
    this.pausedFlag = false;
    this.offset = this.outer.clock.now() - this.frozenAt;
    this.floor = this.frozenAt;
    if (this.armedAt !== Infinity) this.armOuter();
    return true;
  }

  /** @internal Called once, by the private wheel built on this clock. */
  createDriver(wake: () => void): WakeupDriver {
    this.wake = wake;
    return this;
  }

  arm(atMs: number): void {
    this.armedAt = atMs;
    if (!this.pausedFlag) this.armOuter();
  }

  disarm(): void {
    this.armedAt = Infinity;
    this.handle?.cancel();
  }

  setRef(ref: boolean): void {
    this.refWanted = ref;
    if (ref) this.handle?.ref();
    else this.handle?.unref();
  }

  close(): void {
    this.armedAt = Infinity;
    this.handle?.cancel();
    this.handle = undefined;
  }

  private armOuter(): void {
    // A closed outer wheel has cancelled every timer on it; the set's timers are dead with it.
    if (this.outer.isClosed) return;
    const delay = this.armedAt + this.offset - this.outer.clock.now();
    const delayMs = delay > 0 ? delay : 0;
    if (this.handle === undefined) {
      this.handle = this.outer.schedule(delayMs, this.onOuterFire);
      if (!this.refWanted) this.handle.unref();
    } else {
      this.handle.refresh(delayMs);
    }
  }

  /** The outer handle came due: virtual time has reached `armedAt`, so let the private wheel run. */
  private readonly onOuterFire = (): void => {
    const due = this.armedAt;
    this.armedAt = Infinity;
    // Rounding in `armedAt + offset` must not leave the reading a hair short of the due time.
    if (due !== Infinity && due > this.floor) this.floor = due;
    this.wake!();
  };
}
