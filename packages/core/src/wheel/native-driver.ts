/**
 * NativeDriver: the one native timer that wakes a wheel, setTimeout's delay limit, and the millisecond grid it fires on.
 *
 * # The grid native timers fire on
 *
 * libuv counts its timers in whole milliseconds of the monotonic clock (`process.hrtime`): a
 * `setTimeout` fires at the first loop turn after its millisecond boundary, a few µs past an
 * integer number of hrtime milliseconds. `performance.now()` reads the same clock, but counts
 * from the process's start, so libuv's boundaries fall at one fixed fraction of a millisecond
 * of it, different in every process (measured: 0.40, 0.51, 0.53 and 0.85 in four processes).
 * (Where the kernel's coarse monotonic clock ticks every ms, HZ=1000, libuv reads that one, and
 * its boundaries come a little after the whole hrtime ms: wake-ups then land a little into the
 * tick, never before it.)
 * A wheel whose ticks begin at whole `performance.now()` milliseconds therefore wakes that far
 * into its tick on average, or, when its tick begins just after libuv's boundary, wakes a hair
 * too early, finds nothing due, and waits a whole millisecond more (1-4 % of wake-ups).
 *
 * So a wheel on the system clock begins its ticks just before libuv's boundaries
 * ({@link loopGridOriginMs}): every native wake-up lands at the start of the tick it was armed
 * for, and no wake-up finds its tick not yet begun (benchmarks/README.md gives the lateness
 * this saved). What is left above an exact-time heap is the tick: a timer due between a
 * boundary and the wake-up after it waits for the next tick.
 */
import { atJobEnd, freshNow, SystemClock, type Clock, type WakeupDriver } from '../clocks/clock.js';
import { optionChecks } from '../kit/options-kit.js';

const core = optionChecks('@tickwheel/core');

/** setTimeout's largest delay; anything longer fires after 1 ms with a TimeoutOverflowWarning. */
export const MAX_NATIVE_DELAY_MS = 2 ** 31 - 1;

/**
 * How far before libuv's boundary a tick begins: more than the error of reading the two clocks
 * back to back, so a wake-up at the boundary always finds its tick begun. A timer due
 * in this sliver before a boundary waits for the next one: 0.2 % of timers, 1 ms later.
 */
const GRID_LEAD_MS = 2 ** -9;
/**
 * The grid's offset is a multiple of this, so `origin + k` and `t - origin` stay exact doubles
 * for every reading below 2^42 ms (139 years), as they are with a whole origin (`tick-scale.ts`).
 */
const GRID_STEP_MS = 2 ** -10;
const NS_PER_MS = 1_000_000n;

/**
 * Where tick 0 of a wheel on `clock` begins: on the system clock (reading the real
 * `performance.now`) with whole-ms ticks, just before the last libuv millisecond boundary (see
 * the module comment); on any other clock, or with fractional ticks, the whole ms of a fresh
 * reading. Never after the reading, and less than 1 ms before it.
 */
export function loopGridOriginMs(clock: Clock, tickMs: number): number {
  const now = freshNow(clock);
  const hrtime = (globalThis as { process?: { hrtime?: { bigint?: () => bigint } } }).process?.hrtime;
  if (
    !Number.isInteger(tickMs) ||
    !(clock instanceof SystemClock) ||
    !clock._readsNativeSource() ||
    typeof hrtime?.bigint !== 'function'
  ) {
    return Math.floor(now);
  }
  // The pair read closest together of three: the least disturbed by a preemption between reads.
  let bestSpan = Infinity;
  let reading = now;
  let intoMs = 0;
  for (let i = 0; i < 3; i++) {
    const before = clock.preciseNow();
    const ns = hrtime.bigint();
    const after = clock.preciseNow();
    if (after - before < bestSpan) {
      bestSpan = after - before;
      reading = (before + after) / 2;
      intoMs = Number(ns % NS_PER_MS) / 1e6;
    }
  }
  return originOnLoopGrid(reading, intoMs);
}

/**
 * @internal The arithmetic of {@link loopGridOriginMs}: `readingMs` is a clock reading taken when
 * the monotonic clock was `intoMs` (0 <= intoMs < 1) into its current millisecond.
 */
export function originOnLoopGrid(readingMs: number, intoMs: number): number {
  // The reading, modulo 1 ms, at which libuv's millisecond began, led and kept to the step.
  const boundary = (((readingMs - intoMs - GRID_LEAD_MS) % 1) + 1) % 1;
  const phase = Math.floor(boundary / GRID_STEP_MS) * GRID_STEP_MS;
  return Math.floor(readingMs - phase) + phase;
}

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
    const o = core.object(options, 'options', ['yieldToIoWhenLateMs']) as NativeDriverOptions;
    const late = o.yieldToIoWhenLateMs ?? 10;
    this.yieldToIoWhenLateMs = late === Infinity ? late : core.durationMs(late, 'yieldToIoWhenLateMs');
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
