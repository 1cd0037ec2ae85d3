/**
 * TickScale: the conversion between a clock's milliseconds and a wheel's ticks.
 * Must not depend on: anything but the kit's MAX_DELAY_MS (pure arithmetic).
 *
 * The conversion between a clock's milliseconds and a wheel's ticks, for any positive finite
 * `tickMs`: 1 (the default), a power of two, or a fraction such as 0.3 or 1000 / 60.
 *
 * Tick `k` begins at `origin + k * tickMs`. Three functions are defined on top of that and kept
 * consistent with each other, whatever the floating-point rounding:
 *
 * - `nowTick(t)`: the last tick that has begun at clock reading `t`;
 * - `dueTick(e)`: the first tick that begins at or after expiry `e` (relative to the origin);
 * - `timeOfTick(k)`: the smallest clock reading at which `nowTick` reaches `k`.
 *
 * `nowTick(timeOfTick(k)) >= k` always holds, so a driver woken at `timeOfTick(k)` always makes
 * progress (a wake-up that fires nothing and re-arms for the same time would spin forever: that
 * was the `tickMs: 0.3` hang). And since `nowTick` is monotonic, a reading that has reached tick
 * `k` is never below `timeOfTick(k)`, which is the `expiresAt` a timer due at tick `k` reports.
 *
 * For a whole `tickMs` or a power of two (1 included) boundaries are exact. For other values
 * `t / tickMs` carries rounding error: `5 * (1000 / 60) / (1000 / 60)` need not be 5, and a clock
 * stepped by `1000 / 60` drifts from `n * (1000 / 60)`. There `nowTick` and `dueTick` treat a
 * quotient within a relative 2^-30 (at most 1/64 tick) of a whole number as that number, so a
 * timer set for five frames of a 60 Hz loop fires on the fifth frame, not the sixth; the price is
 * that `expiresAt` may lie that little below `now + delayMs`.
 */

import { MAX_DELAY_MS } from '../kit/options-kit.js';

export { MAX_DELAY_MS };

/**
 * Relative tolerance for fractional ticks (see the module comment). A clock advanced by
 * `1000 / 60` per frame drifts from `n * (1000 / 60)` by about n * 1.5e-17 relative (2e6 frames:
 * 3e-11, measured), so 2^-30 keeps a 60 Hz loop on the right frame for about 10 days of frames.
 */
const SNAP = 2 ** -30;
/** Snapping never spans more than this fraction of a tick, however large the tick number. */
const SNAP_CAP = 2 ** -6;
const BOUND_STEPS = 64;

const f64 = new Float64Array(1);
const i64 = new BigInt64Array(f64.buffer);

/** The next double above `x` (x finite). */
export function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  f64[0] = x;
  i64[0] = x > 0 ? i64[0] + 1n : i64[0] - 1n;
  return f64[0];
}

/** The next double below `x` (x finite). */
export function nextDown(x: number): number {
  return -nextUp(-x);
}

/** `a + b` rounded up instead of to nearest, for sums past 2^53 where doubles skip whole ms. */
export function sumUp(a: number, b: number): number {
  const s = a + b;
  if (s < MAX_DELAY_MS) return s;
  // Fast2Sum: with |big| >= |small|, `small - (s - big)` is the exact rounding error.
  const big = Math.abs(a) >= Math.abs(b) ? a : b;
  const small = big === a ? b : a;
  return small - (s - big) > 0 ? nextUp(s) : s;
}

export class TickScale {
  /** True when `tickMs` is whole or a power of two, so that boundaries need no tolerance. */
  private readonly exact: boolean;
  /** True when `tickMs` is a power of two, so that dividing by it never rounds. */
  private readonly powerOfTwo: boolean;

  constructor(
    /**
     * The clock reading that tick 0 begins at: a whole number, or on the system clock a whole
     * number plus a multiple of 2^-10 (`loopGridOriginMs`), which keeps boundaries exact below 2^42.
     */
    readonly originMs: number,
    readonly tickMs: number,
  ) {
    this.powerOfTwo = Number.isInteger(Math.log2(tickMs));
    this.exact = this.powerOfTwo || Number.isInteger(tickMs);
  }

  /** The tick `e` ms after the origin falls due at: the first tick beginning at or after it. */
  dueTick(e: number): number {
    if (this.tickMs === 1 && e <= MAX_DELAY_MS) return Math.ceil(e);
    const x = e / this.tickMs;
    if (x > Number.MAX_VALUE) return Number.MAX_VALUE; // a clock so far out that ticks overflow
    let tick = this.exact ? Math.ceil(x) : Math.ceil(x - snap(x));
    // Past 2^53 ms doubles skip whole ms, and past 2^40 fractional ticks a quotient's rounding
    // outgrows the tolerance: there, step up until the tick's start is not before the expiry.
    if (e <= MAX_DELAY_MS && (this.powerOfTwo || x <= 2 ** 40)) return tick;
    for (let i = 0; i < BOUND_STEPS && this.timeOfTick(tick) < this.originMs + e; i++) tick = nextTick(tick);
    return tick;
  }

  /** The last tick that has begun at clock reading `t`; capped to a finite number. */
  nowTick(t: number): number {
    const x = (t - this.originMs) / this.tickMs;
    const tick = Math.floor(this.exact ? x : x + snap(x));
    return tick <= Number.MAX_VALUE ? tick : Number.MAX_VALUE;
  }

  /** The smallest clock reading at which `nowTick` reaches `tick`; Infinity for Infinity. */
  timeOfTick(tick: number): number {
    if (tick === Infinity) return Infinity;
    if (tick <= 0) return this.originMs + tick * this.tickMs; // the past: no tolerance to honour
    // The inverse of nowTick: x + snap(x) >= tick, with snap capped for large ticks.
    const x = this.exact ? tick : tick * SNAP >= SNAP_CAP * (1 + SNAP) ? tick - SNAP_CAP : tick / (1 + SNAP);
    let t = this.originMs + x * this.tickMs;
    if (!Number.isFinite(t)) return Number.MAX_VALUE;
    // Rounding leaves it a few ulps off either way. Up until the tick has begun, in growing
    // steps so that the loop ends whatever the magnitude; then down while it still has.
    for (let step = 0; this.nowTick(t) < tick; step = step === 0 ? nextUp(t) - t : step * 2)
      t = step === 0 ? nextUp(t) : t + step;
    // Exact boundaries are already the smallest reading below 2^53; snapped ones, and any past
    // 2^53 where doubles skip whole ticks, may reach a little below.
    const search = !this.exact || Math.abs(t) > MAX_DELAY_MS || Math.abs(x) > MAX_DELAY_MS;
    for (let i = 0; i < BOUND_STEPS && search; i++) {
      const below = nextDown(t);
      if (this.nowTick(below) < tick) break;
      t = below;
    }
    return t;
  }
}

/** The next whole tick number: `tick + 1`, or the next double where that is absorbed. */
function nextTick(tick: number): number {
  return tick + 1 > tick ? tick + 1 : nextUp(tick);
}

/** The snapping tolerance at quotient `x >= 0`. */
function snap(x: number): number {
  const s = Math.abs(x) * SNAP;
  return s < SNAP_CAP ? s : SNAP_CAP;
}
