/**
 * GameClock: a TimerSet's game time, which pauses and runs at a scale of the outer wheel's time, driven by one timer on that wheel.
 *
 * Game time is a linear function of the outer clock's reading `o`: `o * rate - offset`, where
 * `rate` is the time scale while the clock runs and 0 while it is paused. Every change of rate
 * (a pause, a resume, a new time scale) first reads the game time `g` and then picks the new
 * `offset` so that the line goes on from `g`: game time never jumps and never goes back.
 *
 * A `TimerSet` keeps its timers on a private wheel built on this clock, so they are measured in
 * game time. That wheel's single wake-up ("call me at game time T") becomes one handle on the
 * outer wheel, due at outer time `(T + offset) / rate`. A change of rate re-arms (or, at rate 0,
 * cancels) that one handle: O(1) however many timers the set holds, and no timer's remaining
 * game time changes, only how much outer time it takes to run out.
 *
 * Pause and time scale are separate, as Unity's `Time.timeScale` and a game's own pause flag
 * are: `pause()` stops the clock whatever the scale, `resume()` brings back the scale in force
 * (which may itself be 0), and `setTimeScale()` while paused takes effect on `resume()`.
 */
import type { DrivingClock, WakeupDriver } from '../clocks/clock.js';
import type { TimerHandle } from '../wheel/timer-handle.js';
import type { TimingWheel } from '../wheel/timing-wheel.js';

export class GameClock implements DrivingClock, WakeupDriver {
  /** The game time runs at `rate` times the outer time: the scale while running, 0 while paused. */
  private rate: number;
  /** Game time = outer reading * rate - offset while `rate` > 0. */
  private offset: number;
  /** The game time while `rate` is 0. */
  private frozenAt = 0;
  private pausedFlag = false;
  private scale: number;
  /** Readings never go below this: the last reading, or the game time the outer handle was due. */
  private floor = -Infinity;
  /** The game time the inner wheel asked to be woken at; Infinity when it did not. */
  private armedAt = Infinity;
  private handle: TimerHandle | undefined;
  private refWanted = true;
  private wake: (() => void) | undefined;

  /**
   * @param outer - the wheel whose clock game time follows, and which gets the one wake-up timer
   * @param timeScale - a finite number >= 0 (checked by the caller); game time starts at the outer clock's reading
   */
  constructor(
    private readonly outer: TimingWheel,
    timeScale = 1,
  ) {
    const start = outer.clock.now();
    this.scale = timeScale;
    this.rate = timeScale;
    // With a scale of 1 the offset is 0 and game time is the outer reading itself, bit for bit.
    this.offset = start * timeScale - start;
    this.frozenAt = start;
  }

  /** Game milliseconds: never decreasing; frozen while paused or at a time scale of 0. */
  now(): number {
    if (this.rate === 0) return this.frozenAt;
    let t = this.outer.clock.now() * this.rate - this.offset;
    if (t < this.floor) t = this.floor;
    this.floor = t;
    return t;
  }

  get paused(): boolean {
    return this.pausedFlag;
  }

  /** The factor game time runs at relative to the outer wheel's time while not paused. */
  get timeScale(): number {
    return this.scale;
  }

  /** Stops game time. O(1). Returns false if it was already paused. */
  pause(): boolean {
    if (this.pausedFlag) return false;
    this.pausedFlag = true;
    this.retime();
    return true;
  }

  /** Restarts game time where it stopped, at the time scale in force. O(1). Returns false if it was not paused. */
  resume(): boolean {
    if (!this.pausedFlag) return false;
    this.pausedFlag = false;
    this.retime();
    return true;
  }

  /** Runs game time at `factor` times the outer time from now on (a finite number >= 0, checked by the caller). O(1). */
  setTimeScale(factor: number): void {
    if (factor === this.scale) return;
    this.scale = factor;
    this.retime();
  }

  /** @internal Called once, by the private wheel built on this clock. */
  createDriver(wake: () => void): WakeupDriver {
    this.wake = wake;
    return this;
  }

  arm(atMs: number): void {
    this.armedAt = atMs;
    if (this.rate !== 0) this.armOuter();
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

  /** Continues game time from its current reading at the rate that pause and scale now give. */
  private retime(): void {
    const game = this.now();
    const rate = this.pausedFlag ? 0 : this.scale;
    this.rate = rate;
    if (rate === 0) {
      this.frozenAt = game;
      this.handle?.cancel();
      return;
    }
    this.offset = this.outer.clock.now() * rate - game;
    this.floor = game;
    if (this.armedAt !== Infinity) this.armOuter();
  }

  private armOuter(): void {
    // A closed outer wheel has cancelled every timer on it; the set's timers are dead with it.
    if (this.outer.isClosed) return;
    const delay = (this.armedAt + this.offset) / this.rate - this.outer.clock.now();
    // A tiny scale can overflow the delay: past MAX_DELAY_MS the outer wheel holds it unfired, as asked.
    const delayMs = delay > 0 ? (delay < Number.MAX_VALUE ? delay : Number.MAX_VALUE) : 0;
    if (this.handle === undefined) {
      this.handle = this.outer.schedule(delayMs, this.onOuterFire);
      if (!this.refWanted) this.handle.unref();
    } else {
      this.handle.refresh(delayMs);
    }
  }

  /** The outer handle came due: game time has reached `armedAt`, so let the private wheel run. */
  private readonly onOuterFire = (): void => {
    const due = this.armedAt;
    this.armedAt = Infinity;
    // Rounding in `(armedAt + offset) / rate` must not leave the reading a hair short of the due time.
    if (due !== Infinity && due > this.floor) this.floor = due;
    this.wake!();
  };
}
