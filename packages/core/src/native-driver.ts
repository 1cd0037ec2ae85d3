/**
 * NativeDriver: the one native timer that wakes a wheel, and setTimeout's delay limit.
 * Must not depend on: the wheel's internals or any adapter package (it only calls the wake-up it is given).
 */
import { atJobEnd, freshNow, type Clock, type WakeupDriver } from './clock.js';

/** setTimeout's largest delay; anything longer fires after 1 ms with a TimeoutOverflowWarning. */
export const MAX_NATIVE_DELAY_MS = 2 ** 31 - 1;

/** Options of {@link NativeDriver}. */
export interface NativeDriverOptions {
  /**
   * When the native timer fires this many ms or more after it was due (the event loop was
   * blocked), the driver yields one event-loop turn with `setImmediate` before waking the wheel.
   * The poll phase in between delivers I/O that completed during the block, so a response that
   * arrived in time is not reported as a timeout (the failure mode of undici #3410).
   * `Infinity` disables it. Default 10.
   */
  yieldToIoWhenLateMs?: number;
}

type NativeTimer = ReturnType<typeof setTimeout>;

/**
 * The wheel's one native timer. It is armed for the wheel's next non-empty bucket, never for
 * every tick, so an idle wheel makes no wake-ups at all.
 *
 * Delays beyond setTimeout's 2^31-1 ms limit are reached in several hops; on each hop the wheel
 * finds nothing due and arms again. `setTimeout` and friends are looked up on `globalThis` at
 * call time, so fake timers installed after the wheel was built are honoured.
 */
export class NativeDriver implements WakeupDriver {
  private timer: NativeTimer | undefined;
  private immediate: ReturnType<typeof setImmediate> | undefined;
  private armedAt = Infinity;
  /** Whether the wheel wants the process kept alive. */
  private ref = true;
  /** What the current native timer was last told; synced with `ref` at the end of the job. */
  private appliedRef = true;
  private refSyncQueued = false;
  private readonly yieldToIoWhenLateMs: number;

  constructor(
    private readonly clock: Clock,
    private readonly wake: () => void,
    options: NativeDriverOptions = {},
  ) {
    this.yieldToIoWhenLateMs = options.yieldToIoWhenLateMs ?? 10;
  }

  arm(atMs: number): void {
    this.disarm();
    this.armedAt = atMs;
    // From a fresh reading: the job's cached one may be a long job old, and the timer would
    // then fire late by the job's length.
    const delay = Math.min(MAX_NATIVE_DELAY_MS, Math.max(1, Math.ceil(atMs - freshNow(this.clock))));
    const timer = globalThis.setTimeout(this.onTimeout, delay);
    if (!this.ref) timer.unref?.();
    this.appliedRef = this.ref;
    this.timer = timer;
  }

  disarm(): void {
    if (this.timer !== undefined) {
      globalThis.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.immediate !== undefined) {
      globalThis.clearImmediate(this.immediate);
      this.immediate = undefined;
    }
    this.armedAt = Infinity;
  }

  /**
   * Applied to the native timer once, at the end of the current job: `wheel.schedule(...).unref()`
   * on an otherwise unref'ed wheel flips the wish twice in a row, and a native `ref()` plus
   * `unref()` per schedule would cost more than the schedule. The loop only looks at the timer's
   * ref state after the job and its microtasks, so it never sees a stale one. Nothing is queued
   * while no native timer is armed (the next `arm` applies the wish) or when the timer already
   * has the state asked for.
   */
  setRef(ref: boolean): void {
    this.ref = ref;
    if (this.timer === undefined || this.refSyncQueued || this.appliedRef === ref) return;
    this.refSyncQueued = true;
    atJobEnd(this.syncRef);
  }

  close(): void {
    this.disarm();
  }

  private readonly syncRef = (): void => {
    this.refSyncQueued = false;
    if (this.timer === undefined || this.appliedRef === this.ref) return;
    this.appliedRef = this.ref;
    if (this.ref) this.timer.ref?.();
    else this.timer.unref?.();
  };

  private readonly onTimeout = (): void => {
    this.timer = undefined;
    const late = freshNow(this.clock) - this.armedAt;
    if (late >= this.yieldToIoWhenLateMs) {
      // Always ref'ed: Node lets the loop sleep in poll while only unref'ed immediates are queued,
      // which would hold the expiry back until some unrelated I/O or timer. It is one loop turn.
      this.immediate = globalThis.setImmediate(this.onImmediate);
      return;
    }
    this.armedAt = Infinity;
    this.wake();
  };

  private readonly onImmediate = (): void => {
    this.immediate = undefined;
    this.armedAt = Infinity;
    this.wake();
  };
}
