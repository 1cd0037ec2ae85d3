/**
 * WheelFiling: a wheel's book of pending timers: filing and cancelling entries, their counts, ref state and the armed wake-up.
 * Must not depend on: node:timers, the clock or a particular driver (the WakeupDriver contract only).
 *
 * Everything schedule, cancel and refresh do beyond the slot arithmetic of `wheel-levels.ts`:
 * the counters behind `stats()`, whether the driver keeps the process alive, and arming it when
 * a new timer is the soonest. This is the hot path; the passes that fire and cascade are in
 * `wheel-pass.ts`, the design in `timing-wheel.ts`.
 */
import type { WakeupDriver } from '../clocks/clock.js';
import type { TickScale } from './tick-scale.js';
import * as timerState from './timer-handle.js';
import type { TimerHandle } from './timer-handle.js';
import { WheelLevels } from './wheel-levels.js';
import type { WheelStats } from './wheel-types.js';

// Module-level copies: compiled to CommonJS, imported constants are read off the exports object at
// every use, which shows in the schedule/cancel hot path (~5-10%).
const { CANCELLED, isUnrefDelay } = timerState;

export abstract class WheelFiling extends WheelLevels {
  /** The tick the driver is armed for; Infinity when disarmed. */
  protected armedTick = Infinity;
  /** Set while callbacks run, so that arming happens once at the end of the pass. */
  protected processing = false;
  protected closed = false;
  // One counter per event (schedule, fire, cancel) and `pending` derived from them: keeping a
  // pending count as well cost an extra read-modify-write on every schedule and cancel.
  protected scheduledCount = 0;
  protected firedCount = 0;
  protected cancelledCount = 0;
  protected wakeupCount = 0;
  protected cascadedCount = 0;
  protected refiledCount = 0;
  /**
   * Pending handles that were `unref()`ed. The driver must be ref'ed exactly while some pending
   * timer is; counting only the unref'ed ones lets schedule, cancel and fire skip the whole
   * question (one compare with 0) in the usual case where nobody calls `unref()`. Counting every
   * ref'ed handle instead (a call per operation) was ~20 instructions of a schedule plus cancel
   * under cachegrind, and a queued microtask each time a request-at-a-time wheel emptied.
   */
  protected unrefPendingCount = 0;
  /** What the driver was last told by `setRef`; true whenever no unref'ed timer is pending. */
  private refTold = true;

  protected constructor(
    wheelSize: number,
    /** @internal Ticks and clock times. */ readonly _scale: TickScale,
    protected readonly driver: WakeupDriver,
  ) {
    super(wheelSize);
  }

  /** Counters of the wheel's life. */
  stats(): WheelStats {
    return {
      pending: this.pendingCount,
      scheduled: this.scheduledCount,
      fired: this.firedCount,
      cancelled: this.cancelledCount,
      wakeups: this.wakeupCount,
      cascaded: this.cascadedCount,
      refiled: this.refiledCount,
      levels: this.levelCount,
    };
  }

  /** @internal */
  _setRef(handle: TimerHandle, ref: boolean): void {
    const stored = handle._delayMs;
    if (isUnrefDelay(stored) !== ref) return; // already as asked
    handle._delayMs = -stored; // the sign is the ref state: 0 <-> -0 too
    if (handle._prev !== null) this.refChanged(ref);
  }

  /** Timers waiting to fire (parked ones included). */
  protected get pendingCount(): number {
    return this.scheduledCount - this.firedCount - this.cancelledCount;
  }

  /** Counts a new or re-armed pending handle and files it. */
  protected add(handle: TimerHandle): void {
    this.scheduledCount++;
    if (this.unrefPendingCount !== 0) this.syncRef();
    this.file(handle);
  }

  /** Counts and files a fired or cancelled handle that `refresh()` re-arms. */
  protected readd(handle: TimerHandle): void {
    if (isUnrefDelay(handle._delayMs)) this.unrefPendingCount++;
    this.add(handle);
  }

  /**
   * Links an unlinked entry into its bucket, and arms the driver if it is now the soonest.
   * During a pass `armedTick` is -Infinity, so the one compare also stands for "not while
   * processing" (rearm arms once at the end of the pass).
   */
  protected file(handle: TimerHandle): void {
    const tick = this.link(handle);
    if (tick < this.armedTick) {
      this.armedTick = tick;
      this.driver.arm(this._scale.timeOfTick(tick));
    }
  }

  /** Unlinks and counts a pending handle as cancelled; returns true when that emptied its bucket. */
  protected cancelEntry(handle: TimerHandle): boolean {
    const emptied = this.unlink(handle, CANCELLED);
    this.cancelledCount++;
    if (this.unrefPendingCount !== 0) this.leftPending(handle);
    return emptied;
  }

  /** Counts a pending handle that was just unlinked to fire. */
  protected countFired(handle: TimerHandle): void {
    this.firedCount++;
    if (this.unrefPendingCount !== 0) this.leftPending(handle);
  }

  /** A pending handle stopped being pending while unref'ed ones exist: count it, tell the driver. */
  private leftPending(handle: TimerHandle): void {
    if (isUnrefDelay(handle._delayMs)) this.unrefPendingCount--;
    // The last one, cancelled outside a pass: give the native timer back before telling the
    // driver (the caller would disarm next), so that it does not queue a re-ref of a timer that goes.
    if (this.pendingCount === 0 && !this.processing) this.disarm();
    this.syncRef();
  }

  /** A pending handle's `ref()`/`unref()` changed. */
  private refChanged(ref: boolean): void {
    this.unrefPendingCount += ref ? -1 : 1;
    this.syncRef();
  }

  /** Tells the driver whether to keep the process alive, when that changed: while some pending timer is ref'ed. */
  private syncRef(): void {
    const pending = this.pendingCount;
    // No pending timer: nothing is armed, and "ref'ed" keeps the fast path's assumption true.
    const ref = pending === 0 || pending > this.unrefPendingCount;
    if (ref === this.refTold) return;
    this.refTold = ref;
    this.driver.setRef(ref);
  }

  protected disarm(): void {
    if (this.armedTick === Infinity) return;
    this.armedTick = Infinity;
    this.driver.disarm();
  }
}
