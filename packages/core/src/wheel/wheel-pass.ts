/**
 * WheelPass: a wheel's passes from event to event, cascading, firing and re-arming.
 * Must not depend on: node:timers or a particular driver (the WakeupDriver contract only).
 *
 * A wheel's passes: what happens when the driver wakes it. Walk from event to event up to the
 * present, cascading coarse buckets and firing level-0 ones, then arm the one wake-up for the
 * next event. The design, the contracts and a worked example are in `timing-wheel.ts`; this file
 * is its "Cascade", "Driver" and "Errors" sections in code.
 */
import type { Bucket, Link } from './bucket.js';
import * as channels from '../channels.js';
import { publishCallbackError, publishWake } from '../channels.js';
import type { Clock, WakeupDriver } from '../clocks/clock.js';
import type { TickScale } from './tick-scale.js';
import * as timerState from './timer-handle.js';
import type { TimerHandle } from './timer-handle.js';
import type { TimingWheel } from './timing-wheel.js';
import { WheelFiling } from './wheel-filing.js';

// Module-level copies: compiled to CommonJS, imported constants are read off the exports object at
// every use, which shows in the schedule/cancel hot path (~5-10%).
const { FIRED, FIRING } = timerState;
// The same for the wake-up channel: one property read per wake-up while nobody listens.
const { wakeChannel } = channels;

/** How many entries `rearm` looks at to find a coarse bucket's earliest timer. */
const REARM_SCAN_LIMIT = 256;

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

export type ErrorHandler = (error: unknown, handle: TimerHandle) => void;

export abstract class WheelPass extends WheelFiling {
  private passErrors: unknown[] | undefined;
  private loopError: TimerLoopError | undefined;

  protected constructor(
    wheelSize: number,
    scale: TickScale,
    driver: WakeupDriver,
    private readonly readClock: Clock,
    private readonly onError: ErrorHandler | undefined,
    private readonly loopLimit: number,
  ) {
    super(wheelSize, scale, driver);
  }

  /** The driver's callback: process everything due by a fresh reading, then arm for what comes next. */
  protected readonly wake = (): void => {
    this.wakeupCount++;
    const armedTick = this.armedTick;
    this.armedTick = Infinity;
    if (this.closed) return;
    const clock = this.readClock;
    const now = clock.preciseNow?.() ?? clock.now();
    const nowTick = this._scale.nowTick(now);
    // Timing the pass costs two clock reads: only when someone listens (see channels.ts).
    const observed = wakeChannel.hasSubscribers;
    const firedBefore = this.firedCount;
    const passStart = observed ? performance.now() : 0;
    this.processing = true;
    this.armedTick = -Infinity; // nothing arms during the pass (see file)
    const errors: unknown[] = [];
    this.passErrors = errors;
    try {
      this.processUntil(nowTick);
    } finally {
      this.processing = false;
      this.armedTick = Infinity;
      this.passErrors = undefined;
      this.rearm();
    }
    if (observed) {
      const armedAt = armedTick === Infinity ? now : this._scale.timeOfTick(armedTick);
      const wheel = this as unknown as TimingWheel;
      publishWake(wheel, now - armedAt, this.firedCount - firedBefore, performance.now() - passStart);
    }
    const loopError = this.loopError;
    this.loopError = undefined;
    const thrown =
      errors.length === 1
        ? errors[0]
        : errors.length > 1
          ? new AggregateError(errors, `${errors.length} timer callbacks threw`)
          : undefined;
    if (loopError !== undefined) {
      if (thrown !== undefined)
        Object.defineProperty(loopError, 'cause', { value: thrown, configurable: true, writable: true });
      throw loopError;
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- a callback's error is rethrown as it was thrown
    if (thrown !== undefined) throw thrown;
  };

  private processUntil(targetTick: number): void {
    let lastFiredTick = -Infinity;
    let rounds = 0;
    for (;;) {
      const bucket = this.nextEventBucket();
      if (bucket === undefined) break;
      const eventTick = this.startOf(bucket);
      if (eventTick > targetTick || this.closed) break;
      this.currentTick = eventTick;
      if (bucket.level > 0) {
        this.cascadeBatch(this.take(bucket));
        continue;
      }
      // Callbacks that keep re-arming themselves for this tick would never let time move.
      rounds = eventTick === lastFiredTick ? rounds + 1 : 0;
      lastFiredTick = eventTick;
      if (rounds >= this.loopLimit) this.stopLoop(this.take(bucket), eventTick);
      else this.fireBatch(this.take(bucket), eventTick);
    }
    if (targetTick > this.currentTick) this.currentTick = targetTick;
  }

  /** Cancels what keeps re-arming for `tick`, and reports it once. */
  private stopLoop(batch: Bucket, tick: number): void {
    const first = batch._next as TimerHandle;
    let cancelled = 0;
    while (batch._next !== batch) {
      this.cancelEntry(batch._next as TimerHandle);
      cancelled++;
    }
    const error = new TimerLoopError(this.loopLimit, this._scale.timeOfTick(tick), cancelled);
    if (this.onError !== undefined) this.report(error, first);
    else this.loopError ??= error;
  }

  /** Fires the entries of a level-0 bucket, re-filing those that `refresh()` pushed later. */
  private fireBatch(batch: Bucket, tick: number): void {
    // Callbacks may cancel or refresh entries still in the batch: take them one at a time.
    while (batch._next !== batch) {
      const handle = batch._next as TimerHandle;
      if (this.closed) {
        // A callback closed the wheel: what is left of the batch is cancelled, not fired.
        this.cancelEntry(handle);
        continue;
      }
      this.unlink(handle, null);
      if (handle._tick > tick) {
        this.refiledCount++;
        this.file(handle);
        continue;
      }
      this.fire(handle);
    }
  }

  private cascadeBatch(batch: Bucket): void {
    while (batch._next !== batch) {
      const handle = batch._next as TimerHandle;
      this.unlink(handle, null);
      this.cascadedCount++;
      this.file(handle);
    }
  }

  /** Fires an entry just unlinked from its batch. */
  private fire(handle: TimerHandle): void {
    handle._next = FIRING;
    this.countFired(handle);
    // Each callback is a job of its own: timers it schedules count from its first clock read,
    // not from the wake-up's, which a long callback before it would have made stale.
    this.readClock.endJob?.();
    try {
      const callback = handle._callback;
      if (typeof callback === 'function') callback.call(undefined, handle);
      else callback.timerFired(handle);
    } catch (error) {
      this.report(error, handle);
    }
    // Still firing: not re-armed (pending) nor re-armed and cancelled by the callback.
    if (handle._next === FIRING) handle._next = FIRED;
  }

  private report(error: unknown, handle: TimerHandle): void {
    publishCallbackError(this as unknown as TimingWheel, error, handle);
    if (this.onError !== undefined) {
      try {
        this.onError(error, handle);
        return;
      } catch (handlerError) {
        error = handlerError;
      }
    }
    this.passErrors!.push(error);
  }

  /** Arms the driver for the next event, or disarms it when nothing is pending. */
  private rearm(): void {
    if (this.closed || this.pendingCount === 0) {
      this.disarm();
      return;
    }
    const bucket = this.nextEventBucket();
    if (bucket === undefined) return; // only parked timers: nothing will ever be due
    let tick = this.startOf(bucket);
    if (bucket.level > 0) {
      tick = this.earliestDueIn(bucket, tick);
      const next = this.nextEventAfter(bucket);
      if (next >= 0 && next < tick) tick = next;
    }
    this.armedTick = tick;
    this.driver.arm(this._scale.timeOfTick(tick));
  }

  /**
   * A coarse bucket's event is only a cascade; waking at its earliest due tick instead saves the
   * wake-ups in between. Scans a bounded number of entries; a longer bucket wakes at `fallback`.
   */
  private earliestDueIn(bucket: Bucket, fallback: number): number {
    let earliest = Infinity;
    let seen = 0;
    for (let link: Link = bucket._next; link !== bucket; link = link._next!) {
      if (++seen > REARM_SCAN_LIMIT) return fallback;
      const tick = (link as TimerHandle)._tick;
      if (tick < earliest) earliest = tick;
    }
    return earliest === Infinity ? fallback : Math.max(earliest, fallback);
  }
}
