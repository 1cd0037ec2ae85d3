/**
 * TimingWheel: the hierarchical timing wheel's public class, and its design essay.
 * Must not depend on: any adapter package or a library an adapter wraps.
 *
 * # The hierarchical timing wheel
 *
 * A `TimingWheel` holds any number of timers and fires each one when its time comes, with O(1)
 * schedule, cancel and refresh, driven by ONE native timer for the whole wheel. It follows
 * Kafka's `TimingWheel`/`SystemTimer` (the Purgatory redesign), adapted to Node's event loop.
 * The code is split by concept: tick arithmetic (`tick-scale.ts`), levels and slots
 * (`wheel-levels.ts`), buckets (`bucket.ts`), entries (`timer-handle.ts`), passes and arming
 * (`wheel-pass.ts`) and the native timer (`native-driver.ts`).
 *
 * ## Ticks, levels and buckets
 * Time is counted in ticks of `tickMs` (any positive finite number: 1 by default, 0.3, or
 * 1000 / 60 for a 60 Hz loop) from the wheel's origin, the clock reading when it was built,
 * rounded down to a whole ms, or on the system clock to just before libuv's last millisecond
 * boundary, so that the native timer wakes at the start of a tick (`native-driver.ts`). A
 * timer due at time `t` is due at the first tick beginning at or after `t`, and `expiresAt` is
 * that tick's start: a timer never fires before its expiry and at most one tick after it.
 *
 * The wheel has levels 0, 1, 2, ... created on demand; each is a ring of `wheelSize` buckets
 * (64 by default). A bucket of level `L` spans `wheelSize^L` ticks. Read a tick number in base
 * `wheelSize`: digit `L` is the slot at level `L`. A timer goes to the level of the highest digit
 * in which its due tick differs from the current tick, into the slot named by that digit. Filing
 * is pure arithmetic: O(1). A bucket is a doubly-linked ring with itself as sentinel, and an
 * entry is the user's `TimerHandle`, so cancelling is an O(1) unlink.
 *
 * ## Cascade
 * When the current tick reaches the start of an occupied bucket at level `L > 0`, its entries
 * are re-filed: relative to the new current tick they differ in a lower digit, so they drop to a
 * finer level, at most once per level. Worked example, `tickMs = 1`, `wheelSize = 64`, current
 * tick 0, a timer for 10 000 ms = 2·64² + 28·64 + 16, digits (2, 28, 16):
 *
 * | current tick | what happens                        | timer is in        |
 * |-------------:|-------------------------------------|--------------------|
 * |            0 | schedule: highest differing digit 2 | level 2, slot 2    |
 * |         8192 | level-2 slot 2 comes due: cascade   | level 1, slot 28   |
 * |         9984 | level-1 slot 28 comes due: cascade  | level 0, slot 16   |
 * |       10 000 | level-0 slot 16 comes due: fire     | -                  |
 *
 * ## The driver: one native timer, armed at the next non-empty bucket
 * Kafka keeps its buckets in a `DelayQueue`; here each level keeps an occupancy bitmap and the
 * next event is the first set bit at or after the current slot in the lowest non-empty level.
 * The wheel keeps exactly one wake-up armed (`native-driver.ts`: one `setTimeout`) for that
 * event, or for the earliest due tick when a new timer is sooner, so an empty wheel makes no
 * wake-ups and a busy one at most one per tick. When it wakes, the wheel walks from event to
 * event up to the present, so empty stretches cost nothing, and a `ManualClock` advanced by
 * years returns at once.
 *
 * ## The clock contract (system clock)
 * - **A delay counts from the current job's clock reading**: `SystemClock.now()` reads
 *   `performance.now()` at the first call in a synchronous job (a task, a microtask, or one
 *   timer callback run by the wheel) and reuses it until the job ends. A read costs ~40 ns, about
 *   half of a schedule plus cancel (benchmarks/results/core.json), and a job usually reads it
 *   within microseconds of scheduling. Node's `setTimeout` counts from the call instead; the
 *   difference shows only in a job that reads the clock, computes for X ms, then schedules: its
 *   timer fires up to X ms sooner after the call than its delay, never later. Callers whose own
 *   cost dwarfs a read (a fetch, a gRPC call) start from `freshNow(clock)`, which also renews the
 *   job's reading.
 * - **Never early**: a pass fires only what is due by a fresh reading, so a timer fires once a
 *   fresh reading is at or past its `expiresAt`; `remaining()` is `expiresAt` minus a fresh
 *   reading, so it reaches 0 when the timer fires.
 * - **Never late by the length of a job**: the native timer is armed from a fresh reading, so a
 *   timer scheduled after, or pending across, a long job fires as soon as the loop is free.
 *
 * ## Long delays
 * Every delay up to `MAX_DELAY_MS` = 2^53 ms (about 285 000 years) fires at the first tick at or
 * after `now + delayMs`; past 2^53, where doubles skip whole ms, the sum is rounded up, never
 * down. A longer delay (up to `Number.MAX_VALUE`) gives a timer that never fires: it holds no
 * bucket, wakes nothing and does not keep the process alive (`expiresAt` is `Infinity`). The
 * same rule holds for `schedule`, `scheduleAt`, `refresh` and deadlines. Node's `setTimeout`
 * fires anything over 2^31-1 ms after 1 ms; the native timer here reaches far wake-ups in hops.
 *
 * ## Lazy re-filing and same-time order
 * `refresh()` to a later expiry only rewrites the entry's due tick and leaves it in its bucket;
 * when that bucket comes up the entry is re-filed (`stats().refiled`). A heartbeat refreshed on
 * every message costs one field write per message, as with tokio's, Netty's and undici's.
 * Timers due in the same tick fire in the order they were filed into that tick. A timer
 * scheduled, or refreshed earlier, is filed at the call; a timer refreshed later is filed when
 * its old bucket comes up. So a refreshed timer fires after every timer that was scheduled for
 * the same tick before the refresh, as Node's `refresh()` does; unlike Node, a timer scheduled
 * between the refresh and the old bucket's time fires before it. Keeping refresh a field
 * write is worth that difference.
 *
 * ## Errors, re-entrancy and runaway timers
 * Callbacks may schedule, cancel or refresh any timer, themselves included; a timer filed for
 * the tick being fired fires in the same pass. A throwing callback does not stop the others: its
 * error goes to `onError`, or without one is rethrown after the pass (one error as itself,
 * several as an `AggregateError`): an uncaught exception on the system clock, thrown from
 * `advance()` on a `ManualClock`. Timers that keep re-arming for the tick being fired (a
 * `refresh(0)` loop) would never let time move: after `loopLimit` rounds in one pass they are
 * cancelled and one `TimerLoopError` goes to `onError`, or is thrown.
 *
 * ## Threading
 * A wheel belongs to one JavaScript thread (one event loop); it is not shared across workers.
 */
import { isDrivingClock, systemClock, type Clock } from '../clocks/clock.js';
import { loopGridOriginMs, NativeDriver } from './native-driver.js';
import * as tickScale from './tick-scale.js';
import * as timerState from './timer-handle.js';
import type { TimerCallback, TimerTask } from './timer-handle.js';
import { describeValue, optionChecks, requireFunction, requireMs } from '../kit/options-kit.js';
import type { TimingWheelOptions } from './wheel-types.js';
import { WheelPass, type ErrorHandler } from './wheel-pass.js';

// Module-level copies: compiled to CommonJS, an imported binding is a property read off the
// other module's exports object at every use, and `schedule` uses TimerHandle and MAX_DELAY_MS
// on every call (see the measurement in wheel-filing.ts).
const { isUnrefDelay, TimerHandle } = timerState;
type TimerHandle = timerState.TimerHandle;
const { MAX_DELAY_MS, sumUp, TickScale } = tickScale;

/** Checks the constructor's options, in the adapters' message shape. */
const core = optionChecks('@tickwheel/core');
const WHEEL_OPTIONS: readonly (keyof TimingWheelOptions)[] = [
  'tickMs',
  'wheelSize',
  'clock',
  'onError',
  'loopLimit',
  'yieldToIoWhenLateMs',
];

/** The callback a task's handle holds for the moment between its scheduling and its task's store. */
function taskPlaceholder(): void {}

/** The error for a bad `refreshAt` time: the kit's shape, naming the package. */
function badTime(timeMs: unknown): Error {
  const what = 'must be a number of ms on the wheel clock (Infinity: never fires)';
  return typeof timeMs === 'number'
    ? new RangeError(`@tickwheel/core: timeMs ${what}, got ${describeValue(timeMs)}`)
    : new TypeError(`@tickwheel/core: timeMs ${what}, got ${describeValue(timeMs)} (${typeof timeMs})`);
}

/** The brand every copy of this package puts on its wheels: see {@link isTimingWheel}. */
const WHEEL_BRAND = Symbol.for('@tickwheel/core.TimingWheel@0');

/**
 * A hierarchical timing wheel. See the module comment for the design.
 *
 * @example
 * ```ts
 * const wheel = new TimingWheel();
 * const handle = wheel.schedule(5_000, () => console.log('timed out'));
 * handle.cancel(); // the response arrived in time
 * ```
 */
export class TimingWheel extends WheelPass {
  /** The clock timers are measured against. */
  readonly clock: Clock;
  /** Timer resolution in ms. */
  readonly tickMs: number;
  // Copies of `_scale.originMs` and `tickMs === 1` for `tickAfter`, one load each on the schedule
  // path instead of a load through `_scale` and a compare with a possibly boxed double.
  private readonly originMs: number;
  private readonly wholeMsTicks: boolean;

  /** @throws TypeError/RangeError for a bad option, naming it and the value */
  constructor(options: TimingWheelOptions = {}) {
    const o = core.object(options, 'options', WHEEL_OPTIONS) as TimingWheelOptions;
    const tickMs = o.tickMs ?? 1;
    if (typeof tickMs !== 'number') throw core.typeError('tickMs', 'must be a finite number > 0', tickMs);
    if (!(tickMs > 0) || tickMs === Infinity) throw core.rangeError('tickMs', 'must be a finite number > 0', tickMs);
    const wheelSize = o.wheelSize ?? 64;
    const sizes = 'must be a power of two from 2 to 65536';
    if (typeof wheelSize !== 'number') throw core.typeError('wheelSize', sizes, wheelSize);
    if (!Number.isInteger(wheelSize) || wheelSize < 2 || wheelSize > 65536 || (wheelSize & (wheelSize - 1)) !== 0) {
      throw core.rangeError('wheelSize', sizes, wheelSize);
    }
    const clock = o.clock ?? systemClock;
    if (clock === null || typeof clock !== 'object' || typeof clock.now !== 'function') {
      throw core.typeError('clock', 'must be an object with a now() method', clock);
    }
    const onError = o.onError === undefined ? undefined : core.function<ErrorHandler>(o.onError, 'onError');
    const loopLimit = core.integer(o.loopLimit ?? 1000, 'loopLimit', 1);
    const yieldToIoWhenLateMs = o.yieldToIoWhenLateMs ?? 10;
    if (yieldToIoWhenLateMs !== Infinity) core.durationMs(yieldToIoWhenLateMs, 'yieldToIoWhenLateMs');
    const scale = new TickScale(loopGridOriginMs(clock, tickMs), tickMs);
    let wake: () => void = () => undefined;
    const trampoline = (): void => wake();
    const driver = isDrivingClock(clock)
      ? clock.createDriver(trampoline)
      : new NativeDriver(clock, trampoline, { yieldToIoWhenLateMs });
    super(wheelSize, scale, driver, clock, onError, loopLimit);
    wake = this.wake;
    this.clock = clock;
    this.tickMs = tickMs;
    this.originMs = scale.originMs;
    this.wholeMsTicks = tickMs === 1;
  }

  /** Pending timers. */
  get size(): number {
    return this.pendingCount;
  }

  /** True after {@link TimingWheel.close}. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Runs `callback` once, `delayMs` from the current job's clock reading (see the module comment). O(1).
   *
   * @param delayMs - a number from 0 to `Number.MAX_VALUE`; above `MAX_DELAY_MS` (2^53) the timer never fires
   * @param callback - called with the handle when the timer fires
   * @returns the handle: cancel, refresh, inspect
   * @throws TypeError/RangeError for a bad argument; the wheel is unchanged then
   * @example
   * ```ts
   * const h = wheel.schedule(30_000, () => socket.destroy());
   * h.refresh();  // activity: start the 30 s again
   * ```
   */
  schedule(delayMs: number, callback: TimerCallback): TimerHandle {
    if (typeof delayMs !== 'number' || !(delayMs >= 0) || delayMs === Infinity) requireMs(delayMs, 'delayMs');
    if (typeof callback !== 'function') requireFunction(callback, 'callback');
    if (this.closed) throw this.closedError();
    const handle = new TimerHandle(this, callback, this.tickAfter(delayMs), delayMs);
    this.add(handle);
    return handle;
  }

  /**
   * Runs `callback` once at `timeMs`, an absolute time on the wheel's clock. A time in the past
   * fires on the next pass; one more than `MAX_DELAY_MS` ahead never fires. `refresh()` without
   * an argument later reuses the delay from now.
   *
   * @throws TypeError/RangeError when `timeMs` is not a finite number or `callback` not a function
   */
  scheduleAt(timeMs: number, callback: TimerCallback): TimerHandle {
    requireMs(timeMs, 'timeMs', -Number.MAX_VALUE);
    requireFunction(callback, 'callback');
    if (this.closed) throw this.closedError();
    const ahead = timeMs - this.clock.now();
    const tick = ahead > MAX_DELAY_MS ? Infinity : this._scale.dueTick(timeMs - this._scale.originMs);
    const handle = new TimerHandle(this, callback, tick, ahead > 0 ? ahead : 0);
    this.add(handle);
    return handle;
  }

  /**
   * @internal {@link TimingWheel.schedule} for a {@link TimerTask}: same rules, same errors for a
   * bad delay. Reached through `scheduleTask` (`timer-task.ts`), which copes with wheels of
   * other copies of core that lack it.
   */
  _scheduleTask(delayMs: number, task: TimerTask): TimerHandle {
    const handle = this.schedule(delayMs, taskPlaceholder);
    handle._callback = task;
    return handle;
  }

  /** @internal {@link TimingWheel.scheduleAt} for a {@link TimerTask}; see `_scheduleTask`. */
  _scheduleTaskAt(timeMs: number, task: TimerTask): TimerHandle {
    const handle = this.scheduleAt(timeMs, taskPlaceholder);
    handle._callback = task;
    return handle;
  }

  /**
   * Cancels every pending timer and releases the native timer. Scheduling afterwards throws;
   * calling `close()` again does nothing. O(n) in pending timers.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.forEachEntry((handle) => this.cancelEntry(handle));
    this.armedTick = Infinity;
    this.driver.close();
  }

  /** Same as {@link TimingWheel.close}, for `using wheel = new TimingWheel()`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** @internal */
  _cancel(handle: TimerHandle): boolean {
    if (handle._prev === null) return false; // not pending
    // An emptied wheel gives its native timer back, so that an idle wheel never wakes up. (A
    // request-at-a-time client pays a setTimeout and a clearTimeout per request for that, ~1 µs.)
    // The last pending timer always empties its bucket, so only then is the count worth deriving.
    if (this.cancelEntry(handle) && this.pendingCount === 0 && !this.processing) this.disarm();
    return true;
  }

  /** @internal */
  _refresh(handle: TimerHandle, delayMs: number | undefined): void {
    if (delayMs !== undefined) requireMs(delayMs, 'delayMs');
    if (this.closed) throw this.closedError();
    const stored = handle._delayMs; // negated while unref'ed
    const delay = delayMs ?? (stored < 0 ? -stored : stored);
    const tick = this.tickAfter(delay);
    // Only a new delay is stored: rewriting the same one (a tagged field, see TimerHandle) cost
    // ~18 of ~160 instructions per `refresh()` under cachegrind (refresh-100k, Node 20).
    if (delayMs !== undefined) handle._delayMs = isUnrefDelay(stored) ? -delayMs : delayMs + 0; // + 0: -0 is unref'ed
    if (handle._prev !== null) {
      // Later or equal: stay put, the old slot re-files it when it comes up. Earlier: move now.
      if (tick >= handle._tick) {
        handle._tick = tick;
        return;
      }
      this.unlink(handle, null);
      handle._tick = tick;
      this.file(handle);
      return;
    }
    handle._tick = tick;
    this.readd(handle);
  }

  /** @internal */
  _refreshAt(handle: TimerHandle, timeMs: number): void {
    if (typeof timeMs !== 'number' || !(timeMs > -Infinity)) throw badTime(timeMs);
    if (this.closed) throw this.closedError();
    const tick = this.tickAt(timeMs);
    if (handle._prev !== null) {
      // Later or equal: stay put, the old slot re-files it when it comes up. Earlier: move now.
      if (tick >= handle._tick) {
        handle._tick = tick;
        return;
      }
      this.unlink(handle, null);
      handle._tick = tick;
      this.file(handle);
      return;
    }
    handle._tick = tick;
    this.readd(handle);
  }

  /** The due tick of absolute time `timeMs`; Infinity more than MAX_DELAY_MS after the job's reading. */
  private tickAt(timeMs: number): number {
    const e = timeMs - this.originMs;
    // The common case without a clock read: the clock never reads below the origin, so a time
    // less than MAX_DELAY_MS after the origin is less than that after now.
    if (this.wholeMsTicks && e < MAX_DELAY_MS) return Math.ceil(e);
    if (timeMs - this.clock.now() > MAX_DELAY_MS) return Infinity;
    return this._scale.dueTick(e);
  }

  /** The due tick of a timer `delayMs` from the job's reading; Infinity past MAX_DELAY_MS. */
  private tickAfter(delayMs: number): number {
    const elapsed = this.clock.now() - this.originMs;
    const e = elapsed + delayMs;
    // The common case in one line (whole-ms ticks, no rounding below 2^53): the schedule hot path.
    if (this.wholeMsTicks && e < MAX_DELAY_MS) return Math.ceil(e);
    if (delayMs > MAX_DELAY_MS) return Infinity;
    return this._scale.dueTick(sumUp(elapsed, delayMs));
  }

  private closedError(): Error {
    return new Error('TimingWheel is closed: it cannot schedule timers after close()');
  }
}

Object.defineProperty(TimingWheel.prototype, WHEEL_BRAND, { value: true });

/**
 * True when `value` is a {@link TimingWheel} from any copy of `@tickwheel/core` in the process
 * (a nested `node_modules` holds a second copy whenever versions differ, and `instanceof` would
 * reject its wheels). Adapters check their `wheel` option with it.
 */
export function isTimingWheel(value: unknown): value is TimingWheel {
  return value !== null && typeof value === 'object' && (value as { [WHEEL_BRAND]?: unknown })[WHEEL_BRAND] === true;
}
