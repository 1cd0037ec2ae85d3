/**
 * Clocks: the Clock and DrivingClock contracts, SystemClock and freshNow.
 *
 * Clocks: where the wheel reads the time, and how it asks to be woken up.
 *
 * A {@link Clock} only tells the time. A {@link DrivingClock} also knows how to wake a wheel at a
 * given time: the {@link ManualClock} does it synchronously while it is advanced, and the
 * {@link SystemClock} does it with one native `setTimeout` per wheel (see `native-driver.ts`).
 */
import { optionChecks } from '../kit/options-kit.js';

const core = optionChecks('@tickwheel/core');

/** A source of time in milliseconds. It must never go backwards. */
export interface Clock {
  /** The current time in milliseconds. Only differences matter; the origin is the clock's own. */
  now(): number;
  /** A reading that is never cached, for clocks whose `now()` may reuse a reading. */
  preciseNow?(): number;
  /**
   * Ends the current job's cached reading, for clocks whose `now()` reuses one: the next `now()`
   * reads afresh. A wheel calls it before each timer callback, so that each callback is a job.
   */
  endJob?(): void;
  /**
   * @internal An id of the reading `now()` returns until the job ends, new for each reading;
   * -1 (or absent) while `now()` would read afresh. A wheel keys its due-tick base on it.
   */
  readonly _readingId?: number;
}

/**
 * The one wake-up a wheel needs: "call me at `atMs`". A wheel holds exactly one driver, and a
 * driver holds at most one pending wake-up; arming again replaces it.
 */
export interface WakeupDriver {
  /** Wake the wheel once at (not before) `atMs`, in the clock's milliseconds. Replaces any earlier arming. */
  arm(atMs: number): void;
  /** Cancel the pending wake-up, if any. */
  disarm(): void;
  /** Whether the pending wake-up should keep the process alive (Node's ref/unref). */
  setRef(ref: boolean): void;
  /** Release everything; the driver is not used again. */
  close(): void;
}

/** A clock that can also drive a wheel. Clocks that are not driving get the native driver. */
export interface DrivingClock extends Clock {
  createDriver(wake: () => void): WakeupDriver;
}

/** True when `clock` brings its own driver. */
export function isDrivingClock(clock: Clock): clock is DrivingClock {
  return typeof (clock as Partial<DrivingClock>).createDriver === 'function';
}

/**
 * A reading of `clock` that is not the current job's cached one (`preciseNow()` when the clock
 * has it). On the {@link SystemClock} it also renews the job's reading, so timers scheduled
 * after it in the same job count from it. Callers whose own work dwarfs a clock read (a fetch,
 * an RPC) start their timers from this.
 */
export function freshNow(clock: Clock): number {
  return clock.preciseNow?.() ?? clock.now();
}

/** What {@link holdReading} finds on a {@link SystemClock} (another copy of core may lack it). */
interface HoldingClock extends Clock {
  _holdReading(): number;
  _releaseReading(): void;
}

function isHoldingClock(clock: Clock): clock is HoldingClock {
  return typeof (clock as Partial<HoldingClock>)._holdReading === 'function';
}

/**
 * A fresh reading of `clock` that its `now()` returns until {@link releaseReading}: for an
 * adapter's short synchronous section that starts a request's timers (the wheel reads the clock
 * as it files them). Outside such a section the first `now()` of a job queues the end-of-job
 * callback that drops its reading; a request would pay for that callback, and in a process
 * with AsyncLocalStorage for the async hooks of the promise it makes (see benchmarks/README.md).
 * Held, the reading is dropped by the release instead. A job whose reading was already taken
 * keeps it (renewed, as by {@link freshNow}) and its callback. Release in a `finally`: a reading
 * never released would be reused for good. Not public API (`@tickwheel/core/internal`).
 *
 * @example
 * ```ts
 * const now = holdReading(wheel.clock);
 * try {
 *   timer = scheduleTaskAt(wheel, now + budgetMs, call);
 * } finally {
 *   releaseReading(wheel.clock);
 * }
 * ```
 */
export function holdReading(clock: Clock): number {
  return isHoldingClock(clock) ? clock._holdReading() : freshNow(clock);
}

/** Ends a {@link holdReading}: the next `now()` reads the clock (unless the job's reading was taken before the hold). */
export function releaseReading(clock: Clock): void {
  if (isHoldingClock(clock)) clock._releaseReading();
}

const RESOLVED = Promise.resolve();
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with `.call(RESOLVED, ...)`
const promiseThen = Promise.prototype.then;

/**
 * Runs `callback` once the current job and the microtasks already queued have run: a reaction
 * on a settled promise, the same queue `queueMicrotask` uses. Node's `queueMicrotask` wraps each
 * callback in an AsyncResource and a bound function, several times what a promise reaction
 * allocates and runs. `then` is the one this
 * module found, so a library that replaces `Promise.prototype.then` later is not called here.
 */
export function atJobEnd(callback: () => void): void {
  void promiseThen.call(RESOLVED, callback);
}

/** `performance.now` as this module found it, before any test installed fake timers. */
// eslint-disable-next-line @typescript-eslint/unbound-method -- compared by identity, called with `.call(performance)`
const ORIGINAL_PERFORMANCE_NOW = globalThis.performance.now;

/** Options of {@link SystemClock}. */
export interface SystemClockOptions {
  /**
   * Read the OS clock at most once per synchronous job (task or microtask) and reuse that
   * reading until the job ends (or a {@link freshNow} renews it), as Node's own timers reuse
   * the event loop's cached time, because a read costs a good part of a schedule plus cancel. Default
   * true. With it, a job that keeps the CPU for X ms measures the delays it schedules from its
   * reading, so they may end up to X ms sooner after the call than asked, never later; a timer
   * still never fires before its own `expiresAt` by a fresh reading.
   */
  readOncePerJob?: boolean;
}

/**
 * The default clock: monotonic milliseconds from `performance.now()`, so changes to the wall
 * clock (NTP steps, a user changing the date) never move a timer.
 *
 * It reads `globalThis.performance` rather than capturing it once, so that
 * `vi.useFakeTimers()` / `sinon.useFakeTimers()` installed after the wheel was built still take
 * effect. When the function behind `performance.now` is swapped (fake timers installed or
 * uninstalled), the clock re-bases so that its readings stay continuous and never go backwards,
 * and while a swapped-in function is active it reads it on every call (fake time can move
 * within a job).
 */
export class SystemClock implements Clock {
  private source: (() => number) | undefined;
  private readonly nativeSource: () => number;
  private sourceOffset = 0;
  private last = 0;
  private readonly readOncePerJob: boolean;
  private cached = 0;
  private cacheValid = false;
  /** @internal See {@link Clock._readingId}: -1 whenever `cacheValid` is false. */
  _readingId = -1;
  private readings = 0;
  /**
   * An end-of-job callback is queued and has not run yet. One is enough however many readings
   * the job takes: a wheel's pass ends a job per callback (`endJob`), and the callbacks' readings
   * all end with the pass, before any other job runs. Dropping a reading early only costs a read.
   */
  private invalidateQueued = false;
  private readonly invalidate = (): void => {
    this.cacheValid = false;
    this._readingId = -1;
    this.invalidateQueued = false;
  };
  /** The cached reading is a {@link holdReading}'s, which its release drops. */
  private held = false;

  constructor(options: SystemClockOptions = {}) {
    const o = core.object(options, 'options', ['readOncePerJob']) as SystemClockOptions;
    this.readOncePerJob = o.readOncePerJob === undefined ? true : core.boolean(o.readOncePerJob, 'readOncePerJob');
    this.nativeSource = ORIGINAL_PERFORMANCE_NOW;
  }

  /** The current time, reusing this job's reading when `readOncePerJob` is on. */
  now(): number {
    // Both paths return the field, so that an inlined read stays an unboxed double in the caller
    // (a fresh reading returned from one branch and the field from the other made it a tagged
    // value, boxed into a new HeapNumber on every schedule and refresh). Returning the fresh
    // reading instead (ee17a9f) was judged on the `expiry` count, which moves with the load by
    // more than the difference it reported (benchmarks/README.md, the `clocks/clock.ts` rows).
    // `!== true` is one compare where a bare test checks every kind of falsy value.
    if (this.cacheValid !== true) this.readForJob();
    return this.cached;
  }

  /** Reads the clock into `cached`, and keeps it for the rest of the job when `readOncePerJob` allows. */
  private readForJob(): void {
    this.cached = this.preciseNow();
    if (this.readOncePerJob && this.source === this.nativeSource) {
      this.cacheValid = true;
      this._readingId = ++this.readings;
      if (!this.invalidateQueued) {
        this.invalidateQueued = true;
        atJobEnd(this.invalidate);
      }
    }
  }

  /**
   * @internal True while it reads the `performance.now` it found when this module loaded (not a
   * fake installed since), the clock libuv's timers run on (see `loopGridOriginMs`).
   */
  _readsNativeSource(): boolean {
    return this.source === this.nativeSource;
  }

  /** @internal See {@link holdReading}. */
  _holdReading(): number {
    const t = this.preciseNow();
    if (!this.cacheValid && this.readOncePerJob && this.source === this.nativeSource) {
      this.cached = t;
      this.cacheValid = true;
      this._readingId = ++this.readings;
      this.held = true;
    }
    return t;
  }

  /** @internal See {@link releaseReading}. */
  _releaseReading(): void {
    if (!this.held) return;
    this.held = false;
    this.cacheValid = false;
    this._readingId = -1;
  }

  /** Drops this job's reading: the next `now()` reads the clock. */
  endJob(): void {
    this.cacheValid = false;
    this._readingId = -1;
  }

  /** A fresh reading of the clock, never cached. */
  preciseNow(): number {
    const perf = globalThis.performance;
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared by identity, called with `.call(perf)`
    const source = perf.now;
    if (source !== this.source) this.rebase(source, perf);
    let t = source.call(perf) + this.sourceOffset;
    // A swapped source that runs behind must not move time backwards.
    if (t < this.last) t = this.last;
    this.last = t;
    if (this.cacheValid) {
      this.cached = t;
      this._readingId = ++this.readings;
    }
    return t;
  }

  private rebase(source: () => number, perf: typeof globalThis.performance): void {
    const first = this.source === undefined;
    this.source = source;
    this.sourceOffset = first ? 0 : this.last - source.call(perf);
  }
}

/** The process-wide system clock instance that wheels use unless given another. */
export const systemClock: Clock = new SystemClock();
