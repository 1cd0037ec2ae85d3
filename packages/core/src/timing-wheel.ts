/**
 * # The hierarchical timing wheel
 *
 * A `TimingWheel` holds any number of timers and fires each one when its time comes, with O(1)
 * schedule, cancel and refresh, driven by ONE native timer for the whole wheel. It follows
 * Kafka's `TimingWheel`/`SystemTimer` (the Purgatory redesign), adapted to Node's event loop.
 *
 * ## Ticks, levels and buckets
 * Time is counted in ticks of `tickMs` (1 ms by default) from the wheel's origin, the clock
 * reading when it was built. A timer due at time `t` is due at tick `ceil(t / tickMs)`: the
 * first tick boundary at or after its expiry. That one rounding is the whole accuracy contract:
 * a timer never fires before its expiry and at most one tick after it.
 *
 * The wheel has levels 0, 1, 2, ... created on demand; each is a ring of `wheelSize` buckets
 * (64 by default). A bucket of level `L` spans `wheelSize^L` ticks, so a level's tick is the full
 * span of the level below, and a level spans `wheelSize^(L+1)` ticks. Read a tick number in base
 * `wheelSize`: digit `L` is the slot at level `L`. A timer goes to the level of the highest digit
 * in which its due tick differs from the current tick, into the slot named by that digit. So a
 * timer within the current level-0 window sits at level 0 in its exact tick's slot, and timers
 * further out sit in ever coarser buckets. Filing is pure arithmetic: O(1).
 *
 * A bucket is a doubly-linked ring of entries with itself as sentinel (`bucket.ts`). An entry is
 * the user's `TimerHandle` (`timer-handle.ts`), so cancelling is an O(1) unlink.
 *
 * ## Cascade
 * When the current tick reaches the start of an occupied bucket at level `L > 0`, that bucket's
 * entries are re-filed: relative to the new current tick they now differ in a lower digit, so
 * they drop to a finer level. Each entry cascades at most once per level on its way down, so the
 * work per timer is bounded by the number of levels (log base `wheelSize` of its delay).
 *
 * Worked example with `tickMs = 1`, `wheelSize = 64`, current tick 0, and a timer for 10 000 ms.
 * 10 000 = 2·64² + 28·64 + 16, so its digits are (2, 28, 16):
 *
 * | current tick | what happens                        | timer is in        |
 * |-------------:|-------------------------------------|--------------------|
 * |            0 | schedule: highest differing digit 2 | level 2, slot 2    |
 * |         8192 | level-2 slot 2 comes due: cascade   | level 1, slot 28   |
 * |         9984 | level-1 slot 28 comes due: cascade  | level 0, slot 16   |
 * |       10 000 | level-0 slot 16 comes due: fire     | -                  |
 *
 * ## The driver: one native timer, armed at the next non-empty bucket
 * Kafka keeps its buckets in a `DelayQueue` so the timer thread sleeps until the next non-empty
 * bucket instead of ticking. Here each level keeps an occupancy bitmap, one bit per slot; the next
 * event is the first set bit at or after the current slot in the lowest non-empty level (a lower
 * level's window always ends before a higher level's next slot starts). The wheel keeps exactly
 * one wake-up armed with its driver (`native-driver.ts`: one `setTimeout`) for that event, or for
 * the earliest due tick when a new timer is sooner. So an empty wheel makes no wake-ups, a
 * sparse one wakes once per occupied bucket (often once per timer: arming uses the timer's own
 * tick), and a busy one never more than once per tick. When the driver wakes, the wheel walks
 * from event to event up to the present, so stretches with nothing in them cost nothing; this is
 * also how a `ManualClock` advanced by years returns at once.
 *
 * ## Lazy re-filing
 * `refresh()` to a later expiry only rewrites the entry's expiry and leaves it in its bucket.
 * When that bucket comes up, the entry is found not yet due and re-filed (counted in
 * `stats().refiled`). A heartbeat refreshed on every message therefore costs one field write per
 * message, as with tokio's and Netty's idle timers and undici's fast timers.
 *
 * ## Long delays
 * Ticks are plain JavaScript numbers: integral and exact to 2^53, and levels are added as delays
 * need them, so a delay of a hundred years fires at its exact expiry (Node's own `setTimeout`
 * fires anything over 2^31-1 ms after 1 ms). The native timer reaches far wake-ups in hops.
 *
 * ## Errors and re-entrancy
 * Callbacks run in due order (by tick, then in the order they were filed) and may schedule,
 * cancel or refresh any timer, themselves included; a timer scheduled for the current tick from
 * a callback fires in the same pass. A callback that throws does not stop the others: its error
 * goes to `onError`. Without `onError` the errors are rethrown once the pass is over, so on the
 * system clock they surface as an uncaught exception just as a throwing `setTimeout` callback
 * does, and on a `ManualClock` they are thrown from `advance()`.
 *
 * ## Threading
 * A wheel belongs to one JavaScript thread (one event loop); it is not shared across workers.
 */
import { Bucket, type Link } from './bucket.js';
import { publishCallbackError, publishWake, wakeChannel } from './channels.js';
import { isDrivingClock, systemClock, type Clock, type WakeupDriver } from './clock.js';
import { NativeDriver } from './native-driver.js';
import * as timerState from './timer-handle.js';
import { TimerHandle, type TimerCallback } from './timer-handle.js';
import { requireFunction, requireMs, requirePowerOfTwo, describeValue } from './validate.js';

/** Options of {@link TimingWheel}; every one is optional. */
export interface TimingWheelOptions {
  /** The resolution: timers fire at the first multiple of `tickMs` at or after their expiry. Default 1. */
  tickMs?: number;
  /** Buckets per level, a power of two from 2 to 65536. Default 64. */
  wheelSize?: number;
  /** Where time comes from. Default: the monotonic {@link SystemClock}. Pass a `ManualClock` for tests and game loops. */
  clock?: Clock;
  /**
   * Receives errors thrown by callbacks. Default: the errors of one pass are rethrown after the
   * pass (an uncaught exception on the system clock; thrown from `advance()` on a ManualClock).
   */
  onError?: (error: unknown, handle: TimerHandle) => void;
  /**
   * With the native driver: when its timer fires this late (ms) or later because the event loop
   * was blocked, yield one loop turn before expiring timers so that I/O completed during the
   * block is delivered first. `Infinity` disables it. Default 10.
   */
  yieldToIoWhenLateMs?: number;
}

/** Counters of a wheel's life, from {@link TimingWheel.stats}. */
export interface WheelStats {
  /** Timers waiting to fire. */
  pending: number;
  /** Timers scheduled, counting re-arms of fired or cancelled handles by `refresh()`. */
  scheduled: number;
  /** Callbacks run. */
  fired: number;
  /** Pending timers cancelled (including by `close()`). */
  cancelled: number;
  /** Times the driver woke the wheel (native timer callbacks, on the system clock). */
  wakeups: number;
  /** Entries moved from a coarse bucket to a finer one. */
  cascaded: number;
  /** Entries whose bucket came up after `refresh()` had pushed them later, and were re-filed. */
  refiled: number;
  /** Levels in use (created on demand as delays need them). */
  levels: number;
}

/** One level: its buckets and an occupancy bitmap, one bit per slot. */
interface Level {
  readonly buckets: Bucket[];
  readonly occupied: Int32Array;
  /** How many buckets of this level are non-empty; 0 lets the search skip the level. */
  occupiedCount: number;
  /** Ticks spanned by one bucket: wheelSize^level. */
  readonly span: number;
}

// Module-level copies: compiled to CommonJS, imported constants are read off the exports object at
// every use, which shows in the schedule/cancel hot path (~5-10%).
const { CANCELLED, FIRED, FIRING, PENDING, STATE_MASK, UNREF } = timerState;

/** Above this tick number bitwise arithmetic on ticks is unsafe, and filing takes the slow path. */
const MAX_INT32_TICK = 0x7fffffff;
/** How many entries `rearm` looks at to find a coarse bucket's earliest timer. */
const REARM_SCAN_LIMIT = 256;
/** Batches for one tick in one pass before the wheel assumes callbacks re-arm themselves forever. */
const MAX_SAME_TICK_BATCHES = 10_000;

/**
 * A hierarchical timing wheel. See the module comment for the design.
 *
 * @example
 * ```ts
 * const wheel = new TimingWheel();
 * const handle = wheel.schedule(5_000, () => console.log('timed out'));
 * // ...the response arrived in time:
 * handle.cancel();
 * ```
 */
export class TimingWheel {
  /** The clock timers are measured against. */
  readonly clock: Clock;
  /** Timer resolution in ms. */
  readonly tickMs: number;
  /** Buckets per level. */
  readonly wheelSize: number;
  /** @internal The clock reading that tick 0 stands for (whole ms). */
  readonly _originMs: number;

  private readonly shift: number;
  private readonly mask: number;
  private readonly levelOfBit: Uint8Array;
  private readonly levels: Level[] = [];
  private readonly driver: WakeupDriver;
  private readonly onError: ((error: unknown, handle: TimerHandle) => void) | undefined;

  /** Every tick before this one has been processed. */
  private currentTick = 0;
  /** The tick the driver is armed for; Infinity when disarmed. */
  private armedTick = Infinity;
  /** Set while callbacks run, so that arming happens once at the end of the pass. */
  private processing = false;
  private closed = false;
  private pendingCount = 0;
  private refCount = 0;
  private foundLevel = 0;
  private foundSlot = 0;
  private passErrors: unknown[] | undefined;
  private scheduledCount = 0;
  private firedCount = 0;
  private cancelledCount = 0;
  private wakeupCount = 0;
  private cascadedCount = 0;
  private refiledCount = 0;

  /**
   * @throws TypeError/RangeError for a bad option, naming it and the value
   */
  constructor(options: TimingWheelOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`options must be an object, got ${describeValue(options)}`);
    }
    const tickMs = options.tickMs ?? 1;
    requireMs(tickMs, 'tickMs');
    if (tickMs <= 0) throw new RangeError(`tickMs must be a finite number > 0, got ${tickMs}`);
    this.tickMs = tickMs;
    this.wheelSize = requirePowerOfTwo(options.wheelSize ?? 64, 'wheelSize', 2, 65536);
    this.shift = Math.log2(this.wheelSize);
    this.mask = this.wheelSize - 1;
    this.levelOfBit = new Uint8Array(32);
    for (let bit = 0; bit < 32; bit++) this.levelOfBit[bit] = Math.floor(bit / this.shift);
    const clock = options.clock ?? systemClock;
    if (clock === null || typeof clock !== 'object' || typeof clock.now !== 'function') {
      throw new TypeError(`clock must be an object with a now() method, got ${describeValue(clock)}`);
    }
    this.clock = clock;
    this.onError = options.onError === undefined ? undefined : requireFunction<(error: unknown, handle: TimerHandle) => void>(options.onError, 'onError');
    const yieldToIoWhenLateMs = options.yieldToIoWhenLateMs ?? 10;
    if (yieldToIoWhenLateMs !== Infinity) requireMs(yieldToIoWhenLateMs, 'yieldToIoWhenLateMs');
    this._originMs = Math.floor(clock.preciseNow?.() ?? clock.now());
    this.driver = isDrivingClock(clock)
      ? clock.createDriver(this.wake)
      : new NativeDriver(clock, this.wake, { yieldToIoWhenLateMs });
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
   * Runs `callback` once, `delayMs` from now. O(1).
   *
   * @param delayMs - a finite number >= 0; fractions are rounded up to the next whole ms
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
    const handle = new TimerHandle(this, callback, Math.ceil(this.clock.now() - this._originMs + delayMs), delayMs);
    this.add(handle);
    return handle;
  }

  /**
   * Runs `callback` once at `timeMs`, an absolute time on the wheel's clock. A time in the past
   * fires on the next pass. `refresh()` without an argument later reuses the delay from now.
   *
   * @throws TypeError/RangeError when `timeMs` is not a finite number or `callback` not a function
   */
  scheduleAt(timeMs: number, callback: TimerCallback): TimerHandle {
    requireMs(timeMs, 'timeMs', -Number.MAX_VALUE);
    requireFunction(callback, 'callback');
    if (this.closed) throw this.closedError();
    const now = this.clock.now();
    const handle = new TimerHandle(this, callback, Math.ceil(timeMs - this._originMs), Math.max(0, timeMs - now));
    this.add(handle);
    return handle;
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
      levels: this.levels.length,
    };
  }

  /**
   * Cancels every pending timer and releases the native timer. Scheduling afterwards throws;
   * calling `close()` again does nothing. O(n) in pending timers.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const level of this.levels) {
      if (level.occupiedCount === 0) continue;
      for (const bucket of level.buckets) {
        while (bucket._next !== bucket) this.cancelEntry(bucket._next as TimerHandle);
      }
    }
    this.armedTick = Infinity;
    this.driver.close();
  }

  /** Same as {@link TimingWheel.close}, for `using wheel = new TimingWheel()`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** @internal */
  _cancel(handle: TimerHandle): boolean {
    if ((handle._flags & STATE_MASK) !== PENDING) return false;
    this.cancelEntry(handle);
    // An emptied wheel gives its native timer back, so that an idle wheel never wakes up. (A
    // request-at-a-time client pays a setTimeout and a clearTimeout per request for that, ~1 µs.)
    if (this.pendingCount === 0 && !this.processing) this.disarm();
    return true;
  }

  /** @internal */
  _refresh(handle: TimerHandle, delayMs: number | undefined): void {
    if (delayMs !== undefined) requireMs(delayMs, 'delayMs');
    if (this.closed) throw this.closedError();
    const delay = delayMs ?? handle._delayMs;
    const expiresAt = Math.ceil(this.clock.now() - this._originMs + delay);
    handle._delayMs = delay;
    if ((handle._flags & STATE_MASK) === PENDING) {
      // Later or equal: stay put, the old slot re-files it when it comes up. Earlier: move now.
      if (this.dueTick(expiresAt) >= this.dueTick(handle._expiresAt)) {
        handle._expiresAt = expiresAt;
        return;
      }
      this.unlink(handle);
      handle._expiresAt = expiresAt;
      this.file(handle);
      return;
    }
    handle._expiresAt = expiresAt;
    handle._flags = (handle._flags & ~STATE_MASK) | PENDING;
    this.add(handle);
  }

  /** @internal */
  _setRef(handle: TimerHandle, ref: boolean): void {
    const wasRef = (handle._flags & UNREF) === 0;
    if (wasRef === ref) return;
    handle._flags = ref ? handle._flags & ~UNREF : handle._flags | UNREF;
    if ((handle._flags & STATE_MASK) === PENDING) this.changeRefCount(ref ? 1 : -1);
  }

  /** Counts a new or re-armed pending handle and files it. */
  private add(handle: TimerHandle): void {
    this.pendingCount++;
    this.scheduledCount++;
    if ((handle._flags & UNREF) === 0) this.changeRefCount(1);
    this.file(handle);
  }

  private cancelEntry(handle: TimerHandle): void {
    this.unlink(handle);
    handle._flags = (handle._flags & ~STATE_MASK) | CANCELLED;
    this.pendingCount--;
    this.cancelledCount++;
    if ((handle._flags & UNREF) === 0) this.changeRefCount(-1);
  }

  private changeRefCount(delta: number): void {
    const before = this.refCount;
    this.refCount = before + delta;
    // Only a change between "some" and "none" matters to the native timer.
    if (before === 0 || this.refCount === 0) this.driver.setRef(this.refCount > 0);
  }

  private dueTick(expiresAt: number): number {
    return this.tickMs === 1 ? expiresAt : Math.ceil(expiresAt / this.tickMs);
  }

  /** Links an unlinked entry into the bucket its due tick belongs to, and arms the driver if it is the soonest. */
  private file(handle: TimerHandle): void {
    const current = this.currentTick;
    let tick = this.dueTick(handle._expiresAt);
    if (tick < current) tick = current; // overdue: fire on the next pass
    let level: number;
    let slot: number;
    if (tick <= MAX_INT32_TICK) {
      const diff = tick ^ current;
      level = diff <= this.mask ? 0 : this.levelOfBit[31 - Math.clz32(diff)]!;
      slot = (tick >>> (level * this.shift)) & this.mask;
    } else {
      // Past 2^31 ticks: the same digit arithmetic with division instead of shifts.
      level = 0;
      let span = 1;
      let window = this.wheelSize;
      while (Math.floor(tick / window) !== Math.floor(current / window)) {
        level++;
        span = window;
        window *= this.wheelSize;
      }
      slot = Math.floor(tick / span) % this.wheelSize;
    }
    const lv = level < this.levels.length ? this.levels[level]! : this.addLevels(level);
    if (lv.buckets[slot]!.append(handle)) {
      lv.occupied[slot >>> 5]! |= 1 << (slot & 31);
      lv.occupiedCount++;
    }
    if (tick < this.armedTick && !this.processing) {
      this.armedTick = tick;
      this.driver.arm(this._originMs + tick * this.tickMs);
    }
  }

  private unlink(handle: TimerHandle): void {
    const prev = handle._prev!;
    const next = handle._next!;
    prev._next = next;
    next._prev = prev;
    handle._prev = null;
    handle._next = null;
    // Neighbours that are one node: only the sentinel is left, the bucket just became empty.
    if (prev === next) this.bucketEmptied(prev as Bucket);
  }

  private bucketEmptied(bucket: Bucket): void {
    if (bucket.level < 0) return; // a detached batch, not a wheel slot
    const level = this.levels[bucket.level]!;
    level.occupied[bucket.slot >>> 5]! &= ~(1 << (bucket.slot & 31));
    level.occupiedCount--;
  }

  private addLevels(upTo: number): Level {
    while (this.levels.length <= upTo) {
      const index = this.levels.length;
      const buckets: Bucket[] = [];
      for (let slot = 0; slot < this.wheelSize; slot++) buckets.push(new Bucket(index, slot));
      this.levels.push({
        buckets,
        occupied: new Int32Array(Math.ceil(this.wheelSize / 32)),
        occupiedCount: 0,
        span: this.wheelSize ** index,
      });
    }
    return this.levels[upTo]!;
  }

  /**
   * The tick of the next event (a level-0 bucket to fire or a coarser bucket to cascade), or -1
   * when the wheel is empty; leaves its level and slot in `foundLevel`/`foundSlot`.
   */
  private nextEventTick(fromLevel = 0): number {
    const current = this.currentTick;
    for (let l = fromLevel; l < this.levels.length; l++) {
      const level = this.levels[l]!;
      if (level.occupiedCount === 0) continue;
      const window = level.span * this.wheelSize;
      const fromSlot = Math.floor(current / level.span) % this.wheelSize;
      const slot = firstSetBit(level.occupied, fromSlot);
      if (slot >= 0) {
        this.foundLevel = l;
        this.foundSlot = slot;
        return Math.floor(current / window) * window + slot * level.span;
      }
    }
    return -1;
  }

  /** The driver's callback: process everything due by now, then arm for what comes next. */
  private readonly wake = (): void => {
    this.wakeupCount++;
    const armedTick = this.armedTick;
    this.armedTick = Infinity;
    if (this.closed) return;
    const now = this.clock.preciseNow?.() ?? this.clock.now();
    const nowTick = Math.floor((now - this._originMs) / this.tickMs);
    // Timing the pass costs two clock reads: only when someone listens (see channels.ts).
    const observed = wakeChannel.hasSubscribers;
    const firedBefore = this.firedCount;
    const passStart = observed ? performance.now() : 0;
    this.processing = true;
    const errors: unknown[] = [];
    this.passErrors = errors;
    try {
      this.processUntil(nowTick);
    } finally {
      this.processing = false;
      this.passErrors = undefined;
      this.rearm();
    }
    if (observed) {
      const armedAt = armedTick === Infinity ? now : this._originMs + armedTick * this.tickMs;
      publishWake(this, now - armedAt, this.firedCount - firedBefore, performance.now() - passStart);
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} timer callbacks threw`);
  };

  private processUntil(targetTick: number): void {
    let sameTickBatches = 0;
    for (;;) {
      const eventTick = this.nextEventTick();
      if (eventTick < 0 || eventTick > targetTick || this.closed) break;
      // Callbacks that keep re-arming themselves for the current tick would never let time move.
      sameTickBatches = eventTick === this.currentTick ? sameTickBatches + 1 : 0;
      if (sameTickBatches > MAX_SAME_TICK_BATCHES) {
        this.passErrors!.push(
          new Error(`timers kept re-arming for tick ${eventTick} ${MAX_SAME_TICK_BATCHES} times in one pass; they were moved to the next tick`),
        );
        this.deferCurrentTick(eventTick);
        return;
      }
      this.currentTick = eventTick;
      const batch = this.takeFoundBucket();
      if (this.foundLevel === 0) this.fireBatch(batch, eventTick);
      else this.cascadeBatch(batch);
    }
    if (targetTick > this.currentTick) this.currentTick = targetTick;
  }

  /** Empties the bucket `nextEventTick` found into a detached batch, so callbacks can refill the slot. */
  private takeFoundBucket(): Bucket {
    const level = this.levels[this.foundLevel]!;
    const batch = new Bucket(-1, -1);
    level.buckets[this.foundSlot]!.moveAllTo(batch);
    level.occupied[this.foundSlot >>> 5]! &= ~(1 << (this.foundSlot & 31));
    level.occupiedCount--;
    return batch;
  }

  /** Moves what is filed for `tick` to the next tick, so that time can move on. */
  private deferCurrentTick(tick: number): void {
    this.currentTick = tick + 1;
    this.cascadeBatch(this.takeFoundBucket());
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
      this.unlink(handle);
      if (this.dueTick(handle._expiresAt) > tick) {
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
      this.unlink(handle);
      this.cascadedCount++;
      this.file(handle);
    }
  }

  private fire(handle: TimerHandle): void {
    handle._flags = (handle._flags & ~STATE_MASK) | FIRING;
    this.pendingCount--;
    this.firedCount++;
    if ((handle._flags & UNREF) === 0) this.changeRefCount(-1);
    try {
      handle._callback.call(undefined, handle);
    } catch (error) {
      this.report(error, handle);
    }
    if ((handle._flags & STATE_MASK) === FIRING) handle._flags = (handle._flags & ~STATE_MASK) | FIRED;
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
    let tick = this.nextEventTick();
    if (tick < 0) return;
    const level = this.foundLevel;
    if (level > 0) {
      const slot = this.foundSlot;
      tick = this.earliestDueIn(this.levels[level]!.buckets[slot]!, tick);
      // Lazily refreshed entries can make that later than the next bucket's event, at this
      // level or a coarser one; never sleep past those.
      const lv = this.levels[level]!;
      const nextSlot = slot + 1 < this.wheelSize ? firstSetBit(lv.occupied, slot + 1) : -1;
      if (nextSlot >= 0) {
        const window = lv.span * this.wheelSize;
        const nextStart = Math.floor(this.currentTick / window) * window + nextSlot * lv.span;
        if (nextStart < tick) tick = nextStart;
      }
      const coarser = this.nextEventTick(level + 1);
      if (coarser >= 0 && coarser < tick) tick = coarser;
    }
    this.armedTick = tick;
    this.driver.arm(this._originMs + tick * this.tickMs);
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
      const tick = this.dueTick((link as TimerHandle)._expiresAt);
      if (tick < earliest) earliest = tick;
    }
    return earliest === Infinity ? fallback : Math.max(earliest, fallback);
  }

  private disarm(): void {
    if (this.armedTick === Infinity) return;
    this.armedTick = Infinity;
    this.driver.disarm();
  }

  private closedError(): Error {
    return new Error('TimingWheel is closed: it cannot schedule timers after close()');
  }
}

/** Index of the first set bit at or after `from` in a bitmap of 32-bit words, or -1. */
function firstSetBit(words: Int32Array, from: number): number {
  let w = from >>> 5;
  let bits = words[w]! & (-1 << (from & 31));
  for (;;) {
    if (bits !== 0) return (w << 5) + (31 - Math.clz32(bits & -bits));
    if (++w >= words.length) return -1;
    bits = words[w]!;
  }
}
