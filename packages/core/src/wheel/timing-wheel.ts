/**
 * TimingWheel: the hierarchical timing wheel's public class, and its design essay.
 *
 * # The hierarchical timing wheel
 *
 * A `TimingWheel` holds any number of timers and fires each one when its time comes, with O(1)
 * schedule, cancel and refresh, driven by ONE native timer for the whole wheel. It follows
 * Kafka's `TimingWheel`/`SystemTimer` (the Purgatory redesign), adapted to Node's event loop.
 * This file is the wheel: its book of pending timers, its passes and its arming. It holds its
 * parts rather than inheriting them: the levels (`wheel-levels.ts`, with the pure slot
 * arithmetic), the tick arithmetic (`tick-scale.ts`), and the driver (`native-driver.ts`, or the
 * clock's own). Buckets are `bucket.ts`, entries `timer-handle.ts`.
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
 *   timer callback run by the wheel) and reuses it until the job ends: a read costs as much as
 *   a good part of a schedule plus cancel (benchmarks/README.md), and a job usually reads it
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
 * every message costs one field write per message, as with tokio's, Netty's and undici's; the
 * due tick it writes is the job's clock reading in ticks plus its delay, and the wheel keeps
 * that reading's tick base (keyed by the clock's `_readingId`), so the refreshes after the
 * first in a job add a whole delay to it without reading the clock or rounding.
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
 * cancelled and one `TimerLoopError` goes to `onError`, or is thrown. The pass loop and this
 * guard are `wheel-pass.ts`'s `runPass`, which a `TimerSet`'s slab wheel walks too.
 *
 * ## Threading
 * A wheel belongs to one JavaScript thread (one event loop); it is not shared across workers.
 */
// Disposable and Symbol.dispose, stated here for consumers whose lib and types lack them (TypeScript 7 defaults to no @types).
/// <reference lib="esnext.disposable" preserve="true" />
import { freshNow, isDrivingClock, systemClock, type Clock, type WakeupDriver } from '../clocks/clock.js';
import { guardedPublisher, typedChannel } from '../kit/channel-kit.js';
import { describeValue, optionChecks, requireFunction, requireMs } from '../kit/options-kit.js';
import type { Bucket, Link } from './bucket.js';
import { loopGridOriginMs, NativeDriver } from './native-driver.js';
import * as tickScale from './tick-scale.js';
import * as timerState from './timer-handle.js';
import type { TimerCallback, TimerTask } from './timer-handle.js';
import { TimerLoopError } from './timer-loop-error.js';
import { WheelLevels } from './wheel-levels.js';
import { runPass } from './wheel-pass.js';
import type { TimingWheelOptions, WheelStats } from './wheel-types.js';

// Module-level copies: compiled to CommonJS, an imported binding is a property read off the
// other module's exports object at every use, which shows on the schedule and cancel paths.
const { CANCELLED, FIRED, FIRING, isUnrefDelay, TimerHandle } = timerState;
type TimerHandle = timerState.TimerHandle;
const { MAX_DELAY_MS, sumUp, TickScale } = tickScale;

/** Name of the channel of {@link WheelWakeMessage}. */
export const CORE_WAKE_CHANNEL = 'tickwheel:core:wake';
/** Name of the channel of {@link CallbackErrorMessage}. */
export const CORE_CALLBACK_ERROR_CHANNEL = 'tickwheel:core:callback-error';

/** Published on `tickwheel:core:wake` after a wake-up's callbacks ran (see `channels.ts`). */
export interface WheelWakeMessage {
  /** The wheel that woke. */
  readonly wheel: TimingWheel;
  /** How long after the time it was armed for the driver woke the wheel, in ms (>= 0). */
  readonly lateMs: number;
  /** Callbacks run in this wake-up. */
  readonly fired: number;
  /** How long those callbacks ran in all, in ms (0 when none ran). */
  readonly callbackMs: number;
  /** Timers still pending after the wake-up. */
  readonly pending: number;
}

/** Published on `tickwheel:core:callback-error` when a timer callback throws, before `onError` sees it. */
export interface CallbackErrorMessage {
  readonly wheel: TimingWheel;
  /** What the callback threw. */
  readonly error: unknown;
  /** The handle whose callback threw. */
  readonly handle: TimerHandle;
}

/** @internal */
export const wakeChannel = typedChannel<WheelWakeMessage>(CORE_WAKE_CHANNEL);
/** @internal */
export const callbackErrorChannel = typedChannel<CallbackErrorMessage>(CORE_CALLBACK_ERROR_CHANNEL);

/**
 * Publishes on `tickwheel:core:wake` when someone listens (the wheel reads `wakeChannel.hasSubscribers`
 * first anyway: timing the pass is part of the message).
 */
export const publishWake = guardedPublisher(
  wakeChannel,
  (wheel: TimingWheel, lateMs: number, fired: number, callbackMs: number): WheelWakeMessage => ({
    wheel,
    lateMs: lateMs > 0 ? lateMs : 0,
    fired,
    callbackMs,
    pending: wheel.size,
  }),
);

/** Publishes on `tickwheel:core:callback-error` when someone listens. */
export const publishCallbackError = guardedPublisher(
  callbackErrorChannel,
  (wheel: TimingWheel, error: unknown, handle: TimerHandle): CallbackErrorMessage => ({ wheel, error, handle }),
);

/** What receives the errors of callbacks and `TimerLoopError`s: the `onError` option. */
export type ErrorHandler = (error: unknown, handle: TimerHandle) => void;

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

/** Tick bases below this leave room for any whole delay up to 2^31 ms below MAX_DELAY_MS (2^53). */
const MAX_BASE_TICK = 2 ** 52;

/** How many entries `rearm` looks at to find a coarse bucket's earliest timer. */
const REARM_SCAN_LIMIT = 256;

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
export class TimingWheel {
  /** The clock timers are measured against. */
  readonly clock: Clock;
  /** Timer resolution in ms. */
  readonly tickMs: number;
  /** Buckets per level. */
  readonly wheelSize: number;
  /** @internal Ticks and clock times. */
  readonly _scale: tickScale.TickScale;

  // ## The book: where the pending timers are, and what the driver was told
  /** The levels of buckets the pending timers are linked into, and the current tick. */
  private readonly levels: WheelLevels;
  private readonly driver: WakeupDriver;
  /** The tick the driver is armed for; Infinity when disarmed, -Infinity during a pass. */
  private armedTick = Infinity;
  /** Set while callbacks run, so that arming happens once at the end of the pass. */
  private processing = false;
  private closed = false;
  // One counter per event (schedule, fire, cancel) and `pending` derived from them: keeping a
  // pending count as well cost an extra read-modify-write on every schedule and cancel.
  private scheduledCount = 0;
  private firedCount = 0;
  private cancelledCount = 0;
  private wakeupCount = 0;
  private cascadedCount = 0;
  private refiledCount = 0;
  /**
   * Pending handles that were `unref()`ed. The driver must be ref'ed exactly while some pending
   * timer is; counting only the unref'ed ones lets schedule, cancel and fire skip the whole
   * question (one compare with 0) in the usual case where nobody calls `unref()`. Counting every
   * ref'ed handle instead would put a call in every operation, and a queued microtask each time
   * a request-at-a-time wheel emptied.
   */
  private unrefPendingCount = 0;
  /** What the driver was last told by `setRef`; true whenever no unref'ed timer is pending. */
  private refTold = true;
  // Copies of `_scale.originMs` and `tickMs === 1` for `tickAfter`, one load each on the schedule
  // path instead of a load through `_scale` and a compare with a possibly boxed double.
  private readonly originMs: number;
  private readonly wholeMsTicks: boolean;
  /**
   * The clock's `_readingId` whose reading `readingTick` was taken from (-2: none, never an id),
   * and that reading in whole ticks, rounded up: a heartbeat refreshed in the same job adds its
   * whole delay to it instead of reading the clock and rounding (see `_refresh`).
   */
  private readingId = -2;
  private readingTick = 0;

  // ## The passes
  private readonly onError: ErrorHandler | undefined;
  /**
   * Rounds of timers re-arming for the tick being fired, in one pass, before they are cancelled
   * (the `loopLimit` option); a `TimerSet` on this wheel applies the same limit to its timers.
   */
  readonly loopLimit: number;
  private passErrors: unknown[] | undefined = undefined;
  private loopError: TimerLoopError | undefined = undefined;

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
    this.clock = clock;
    this.tickMs = tickMs;
    this.wheelSize = wheelSize;
    this._scale = scale;
    this.levels = new WheelLevels(wheelSize);
    this.driver = isDrivingClock(clock)
      ? clock.createDriver(this.wake)
      : new NativeDriver(clock, this.wake, { yieldToIoWhenLateMs });
    this.originMs = scale.originMs;
    this.wholeMsTicks = tickMs === 1;
    this.onError = onError;
    this.loopLimit = loopLimit;
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
    this.levels.forEachEntry((handle) => this.cancelEntry(handle));
    this.armedTick = Infinity;
    this.driver.close();
  }

  /** Same as {@link TimingWheel.close}, for `using wheel = new TimingWheel()`. */
  [Symbol.dispose](): void {
    this.close();
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
      levels: this.levels.count,
    };
  }

  /** @internal */
  _cancel(handle: TimerHandle): boolean {
    if (handle._prev === null) return false; // not pending
    // An emptied wheel gives its native timer back, so that an idle wheel never wakes up (a
    // request-at-a-time client pays a setTimeout and a clearTimeout per request for that).
    // The last pending timer always empties its bucket, so only then is the count worth deriving.
    if (this.cancelEntry(handle) && this.pendingCount === 0 && !this.processing) this.disarm();
    return true;
  }

  /** @internal */
  _refresh(handle: TimerHandle, delayMs: number | undefined): void {
    // A heartbeat's refresh first (pending, so the wheel is open; its own delay): the path that
    // runs on every message, without the checks and the delay store that only a new delay needs.
    if (delayMs === undefined && handle._prev !== null) {
      const stored = handle._delayMs; // negated while unref'ed
      // Lazy: only the due tick moves (its old bucket re-files it if it moved), and a refresh in a
      // job whose reading an earlier one turned into ticks adds its whole delay to that base.
      const tick =
        this.clock._readingId === this.readingId && (stored | 0) === stored && stored >= 0
          ? this.readingTick + stored
          : this.heartbeatTick(stored);
      if (tick >= handle._tick) handle._tick = tick;
      else this.rearmAt(handle, tick);
      return;
    }
    this.refreshWith(handle, delayMs);
  }

  /** A heartbeat's due tick from the job's clock reading, whose tick base it keeps for the refreshes after it in the job. */
  private heartbeatTick(stored: number): number {
    const elapsed = this.clock.now() - this.originMs;
    const id = this.clock._readingId;
    if (id !== undefined && id >= 0 && this.wholeMsTicks === true && elapsed < MAX_BASE_TICK) {
      this.readingId = id;
      this.readingTick = Math.ceil(elapsed);
    }
    return this.tickAfter(stored < 0 ? -stored : stored);
  }

  /** `refresh` off the heartbeat's path: a new delay, or a handle that is not pending. */
  private refreshWith(handle: TimerHandle, delayMs: number | undefined): void {
    if (delayMs !== undefined) requireMs(delayMs, 'delayMs');
    if (this.closed) throw this.closedError();
    const stored = handle._delayMs; // negated while unref'ed
    const delay = delayMs ?? (stored < 0 ? -stored : stored);
    const tick = this.tickAfter(delay);
    // Only a new delay is stored: rewriting the same one (a tagged field, see TimerHandle) is a
    // measurable share of a refresh, the hottest call of a heartbeat.
    if (delayMs !== undefined) handle._delayMs = isUnrefDelay(stored) ? -delayMs : delayMs + 0; // + 0: -0 is unref'ed
    this.rearmAt(handle, tick);
  }

  /** @internal */
  _refreshAt(handle: TimerHandle, timeMs: number): void {
    if (typeof timeMs !== 'number' || !(timeMs > -Infinity)) throw badTime(timeMs);
    if (this.closed) throw this.closedError();
    this.rearmAt(handle, this.tickAt(timeMs));
  }

  /** Makes `handle` due at `tick`: what `refresh` and `refreshAt` share once the tick is known. */
  private rearmAt(handle: TimerHandle, tick: number): void {
    if (handle._prev !== null) {
      // Later or equal: stay put, the old slot re-files it when it comes up. Earlier: move now.
      if (tick >= handle._tick) {
        handle._tick = tick;
        return;
      }
      this.levels.unlink(handle, null);
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
    if (this.wholeMsTicks === true && e < MAX_DELAY_MS) return Math.ceil(e);
    if (timeMs - this.clock.now() > MAX_DELAY_MS) return Infinity;
    return this._scale.dueTick(e);
  }

  /** The due tick of a timer `delayMs` from the job's reading; Infinity past MAX_DELAY_MS. */
  private tickAfter(delayMs: number): number {
    const elapsed = this.clock.now() - this.originMs;
    const e = elapsed + delayMs;
    // The common case in one line (whole-ms ticks, no rounding below 2^53): the schedule hot path.
    // `=== true`: one compare, where a bare field test checks for every kind of falsy value.
    if (this.wholeMsTicks === true && e < MAX_DELAY_MS) return Math.ceil(e);
    if (delayMs > MAX_DELAY_MS) return Infinity;
    return this._scale.dueTick(sumUp(elapsed, delayMs));
  }

  /** @internal */
  _setRef(handle: TimerHandle, ref: boolean): void {
    const stored = handle._delayMs;
    if (isUnrefDelay(stored) !== ref) return; // already as asked
    handle._delayMs = -stored; // the sign is the ref state: 0 <-> -0 too
    if (handle._prev !== null) this.refChanged(ref);
  }

  // ## The book: filing, cancelling, counting

  /** Timers waiting to fire (parked ones included). */
  private get pendingCount(): number {
    return this.scheduledCount - this.firedCount - this.cancelledCount;
  }

  /** Counts a new or re-armed pending handle and files it. */
  private add(handle: TimerHandle): void {
    this.scheduledCount++;
    if (this.unrefPendingCount !== 0) this.syncRef();
    this.file(handle);
  }

  /** Counts and files a fired or cancelled handle that `refresh()` re-arms. */
  private readd(handle: TimerHandle): void {
    if (isUnrefDelay(handle._delayMs)) this.unrefPendingCount++;
    this.add(handle);
  }

  /**
   * Links an unlinked entry into its bucket, and arms the driver if it is now the soonest.
   * During a pass `armedTick` is -Infinity, so the one compare also stands for "not while
   * processing" (rearm arms once at the end of the pass).
   */
  private file(handle: TimerHandle): void {
    const tick = this.levels.link(handle);
    if (tick < this.armedTick) {
      this.armedTick = tick;
      this.driver.arm(this._scale.timeOfTick(tick));
    }
  }

  /** Unlinks and counts a pending handle as cancelled; returns true when that emptied its bucket. */
  private cancelEntry(handle: TimerHandle): boolean {
    const emptied = this.levels.unlink(handle, CANCELLED);
    this.cancelledCount++;
    if (this.unrefPendingCount !== 0) this.leftPending(handle);
    return emptied;
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

  private disarm(): void {
    if (this.armedTick === Infinity) return;
    this.armedTick = Infinity;
    this.driver.disarm();
  }

  // ## The passes: what happens when the driver wakes the wheel

  /** The driver's callback: process everything due by a fresh reading, then arm for what comes next. */
  private readonly wake = (): void => {
    this.wakeupCount++;
    const armedTick = this.armedTick;
    this.armedTick = Infinity;
    if (this.closed) return;
    const now = freshNow(this.clock);
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
      publishWake(this, now - armedAt, this.firedCount - firedBefore, performance.now() - passStart);
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
    runPass(this.levels, this, targetTick, this.loopLimit);
  }

  /** @internal A step of `runPass`: a callback closed the wheel, the pass ends. */
  _halted(): boolean {
    return this.closed;
  }

  /** @internal A step of `runPass`: a coarse bucket came up, its entries drop to a finer level. */
  _cascadeBucket(bucket: Bucket): void {
    this.cascadeBatch(this.levels.take(bucket));
  }

  /** @internal A step of `runPass`: a level-0 bucket came up. */
  _fireBucket(bucket: Bucket, tick: number): void {
    this.fireBatch(this.levels.take(bucket), tick);
  }

  /** @internal A step of `runPass`: cancels what keeps re-arming for `tick`, and reports it once. */
  _stopLoop(bucket: Bucket, tick: number): void {
    const batch = this.levels.take(bucket);
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
      this.levels.unlink(handle, null);
      if (handle._tick > tick) {
        this.refiledCount++; // refreshed later: file it where it now belongs
        this.file(handle);
        continue;
      }
      this.fire(handle);
    }
  }

  private cascadeBatch(batch: Bucket): void {
    while (batch._next !== batch) {
      const handle = batch._next as TimerHandle;
      this.levels.unlink(handle, null);
      this.cascadedCount++;
      this.file(handle);
    }
  }

  /** Fires an entry just unlinked from its batch. */
  private fire(handle: TimerHandle): void {
    handle._next = FIRING;
    this.firedCount++;
    if (this.unrefPendingCount !== 0) this.leftPending(handle);
    // Each callback is a job of its own: timers it schedules count from its first clock read,
    // not from the wake-up's, which a long callback before it would have made stale.
    this.clock.endJob?.();
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
    publishCallbackError(this, error, handle);
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
    const levels = this.levels;
    const bucket = levels.nextEventBucket();
    if (bucket === undefined) return; // only parked timers: nothing will ever be due
    let tick = levels.startOf(bucket);
    if (bucket.level > 0) {
      tick = earliestDueIn(bucket, tick);
      const next = levels.nextEventAfter(bucket);
      if (next >= 0 && next < tick) tick = next;
    }
    this.armedTick = tick;
    this.driver.arm(this._scale.timeOfTick(tick));
  }

  private closedError(): Error {
    return new Error('TimingWheel is closed: it cannot schedule timers after close()');
  }
}

/**
 * A coarse bucket's event is only a cascade; waking at its earliest due tick instead saves the
 * wake-ups in between. Scans a bounded number of entries; a longer bucket wakes at `fallback`.
 */
function earliestDueIn(bucket: Bucket, fallback: number): number {
  let earliest = Infinity;
  let seen = 0;
  for (let link: Link = bucket._next; link !== bucket; link = link._next!) {
    if (++seen > REARM_SCAN_LIMIT) return fallback;
    const tick = (link as TimerHandle)._tick;
    if (tick < earliest) earliest = tick;
  }
  return earliest === Infinity ? fallback : Math.max(earliest, fallback);
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
