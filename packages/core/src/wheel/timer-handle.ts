/**
 * TimerHandle: one timer entry of the wheel, its lifecycle states, cancel and refresh.
 *
 * The object the wheel links into its buckets is the handle the user holds. Its lifecycle state
 * lives in its links (no flags field); the rest of the design is in `timing-wheel.ts`.
 */
// Disposable and Symbol.dispose, stated here for consumers whose lib and types lack them (TypeScript 7 defaults to no @types).
/// <reference lib="esnext.disposable" preserve="true" />
import { Bucket, type Link } from './bucket.js';
import { freshNow, type Clock } from '../clocks/clock.js';
import type { TickScale } from './tick-scale.js';

/**
 * The lifecycle of a timer entry, read off its links rather than a field of its own (a field
 * would weigh on every pending timer of the process):
 *
 * - pending: `_prev` is not null. It is linked into a bucket (or into the batch being fired, or
 *   among the parked timers that never fire) and waits for its expiry. `cancel()` unlinks it;
 *   `refresh()` to a later time only rewrites its expiry.
 * - cancelled: unlinked by `cancel()` or `wheel.close()` before it fired; `_next` is `CANCELLED`.
 *   It never fires unless `refresh()` re-arms it.
 * - firing: its callback is running right now; `_next` is `FIRING`. It is no longer pending, so
 *   `cancel()` returns false, and `refresh()` inside the callback re-arms it (pending again).
 * - fired: its callback has returned (or thrown); `_next` is `FIRED`. `refresh()` re-arms it, like
 *   Node's `timeout.refresh()`.
 *
 * The three markers are buckets that nothing is ever linked into, so `_next` keeps holding only
 * the two classes it holds anyway (entries and buckets) and its loads stay monomorphic enough.
 */
const CANCELLED: Link = new Bucket(-3, 2);
const FIRING: Link = new Bucket(-3, 3);
const FIRED: Link = new Bucket(-3, 4);

// Declared locally and exported once: compiled to CommonJS, `export const` would make every use
// in this file (and the wheel's hot path) a property read off the exports object.
export { CANCELLED, FIRING, FIRED };

/** The first value `_delayMs` holds: not a number, so that its field is tagged (see the constructor). */
const TAGGED = null;

/**
 * True when a stored `_delayMs` says the handle is unref'ed. Whether a handle keeps the process
 * alive is the sign of its stored delay (-0 for an unref'ed delay of 0), not a field of its own;
 * see the constructor. Only `ref()`/`unref()` and a wheel with unref'ed timers pending look.
 */
export function isUnrefDelay(stored: number): boolean {
  return stored < 0 || (stored === 0 && 1 / stored < 0);
}

/**
 * What a handle asks of the wheel that holds it: the `TimingWheel` (`timing-wheel.ts`), named by
 * its contract here so that the handle's file does not import the wheel's.
 */
export interface TimerOwner {
  readonly clock: Clock;
  readonly _scale: TickScale;
  _cancel(handle: TimerHandle): boolean;
  _refresh(handle: TimerHandle, delayMs: number | undefined): void;
  _refreshAt(handle: TimerHandle, timeMs: number): void;
  _setRef(handle: TimerHandle, ref: boolean): void;
}

/** What a timer runs when it fires; it receives its own handle, so it can refresh itself. */
export type TimerCallback = (handle: TimerHandle) => void;

/**
 * What a timer may run instead of a callback: an object whose `timerFired` the wheel
 * calls with the handle, like Netty's `TimerTask.run(Timeout)`. An owner that keeps one timer
 * per request (a deadline, a gRPC call) passes itself, where a callback would be a bound method
 * or a closure per timer, held as long as the timer is pending.
 * Adapters schedule one through `scheduleTask` (`timer-task.ts`, `@tickwheel/core/internal`).
 */
export interface TimerTask {
  timerFired(handle: TimerHandle): void;
}

/** The readable name of a handle's state. */
export type TimerState = 'pending' | 'cancelled' | 'firing' | 'fired';

/**
 * A timer on a `TimingWheel`: the entry the wheel links into its buckets and the handle the
 * user holds, in one object of six fields, so scheduling allocates exactly once (the heap cost
 * per pending timer is measured in benchmarks/results/core.json).
 *
 * All methods are O(1). Create handles with `wheel.schedule()` or `wheel.scheduleAt()`.
 */
export class TimerHandle {
  /** @internal Null unless pending (see the states above). */ _prev: Link | null = null;
  /** @internal The next entry while pending, else the state marker. */ _next: Link | null = null;
  /**
   * @internal The delay `refresh()` reuses when called without one, negated while unref'ed (see
   * {@link isUnrefDelay}).
   */
  _delayMs: number;

  /** @internal */
  constructor(
    /**
     * @internal A field, not a per-wheel subclass's prototype property: the subclass would save
     * the field but give every wheel its own handle class, and the wheel's code would then see a
     * new map per wheel and turn polymorphic.
     */
    readonly _wheel: TimerOwner,
    /** @internal A callback, or a task (see {@link TimerTask}). */ public _callback: TimerCallback | TimerTask,
    /** @internal The tick it falls due at; Infinity for a timer that never fires. */ public _tick: number,
    delayMs: number,
  ) {
    // The tagged-field idiom (ARCHITECTURE.md): each `scheduleAt` on the system clock stores a
    // fraction, which would make the field a double, a heap box in EVERY handle of the process.
    // Tagged, a whole-ms delay sits in the field; only a fraction (or an unref'ed 0, -0) takes a box.
    this._delayMs = TAGGED as unknown as number;
    this._delayMs = delayMs + 0; // + 0 turns a -0 into 0, which would read as unref'ed
  }

  /** True while the timer waits to fire: not yet fired, not cancelled. */
  get pending(): boolean {
    return this._prev !== null;
  }

  /** Where the handle is in its lifecycle. */
  get state(): TimerState {
    if (this._prev !== null) return 'pending';
    return this._next === CANCELLED ? 'cancelled' : this._next === FIRING ? 'firing' : 'fired';
  }

  /**
   * The time it fires (or fired), in the wheel clock's milliseconds: the start of the first tick
   * at or after its delay's end. It fires once a fresh clock reading is at or past it; `Infinity`
   * for a delay beyond `MAX_DELAY_MS`, which never fires.
   */
  get expiresAt(): number {
    return this._wheel._scale.timeOfTick(this._tick);
  }

  /** The delay `refresh()` reuses when called without one. */
  get delayMs(): number {
    return Math.abs(this._delayMs);
  }

  /** Milliseconds until it fires, by a fresh clock reading; 0 when it is due or no longer pending. */
  remaining(): number {
    if (!this.pending) return 0;
    const left = this.expiresAt - freshNow(this._wheel.clock);
    return left > 0 ? left : 0;
  }

  /**
   * Cancels the timer in O(1).
   * @returns true if it was pending; false if it had already fired or been cancelled
   */
  cancel(): boolean {
    return this._wheel._cancel(this);
  }

  /**
   * Restarts the timer from now, with `delayMs` or the last delay used. Like Node's
   * `timeout.refresh()` it re-arms a handle that has fired or been cancelled, and it may be
   * called from the handle's own callback.
   *
   * Pushing the expiry later is O(1) with no relinking: the entry stays where it is and is
   * re-filed when its old slot comes up (lazy re-filing), which is what makes heartbeats cheap.
   *
   * @throws RangeError/TypeError for a bad `delayMs`; the handle is unchanged then
   */
  refresh(delayMs?: number): this {
    this._wheel._refresh(this, delayMs);
    return this;
  }

  /**
   * Restarts the timer to fire at `timeMs`, an absolute time on the wheel's clock: the absolute
   * twin of {@link TimerHandle.refresh}, for a caller that keeps a deadline rather than a delay
   * (a request's total time limit), so the value is converted once, where it enters.
   *
   * The same rules as `scheduleAt`: it fires at the first tick at or after `timeMs`, never before;
   * a time in the past fires on the next pass; one more than `MAX_DELAY_MS` ahead, or `Infinity`,
   * never fires. Like `refresh()` it re-arms a fired or cancelled handle, pushes a pending one
   * later in O(1) without relinking, and leaves `delayMs` (what a later `refresh()` reuses) as it was.
   *
   * @param timeMs - a number on the wheel clock's scale, or `Infinity` for "never"
   * @throws TypeError when `timeMs` is not a number, RangeError for NaN or -Infinity; the handle is unchanged then
   * @example
   * ```ts
   * const deadline = clock.now() + 30_000;
   * handle.refreshAt(Math.min(deadline, clock.now() + idleMs)); // whichever comes first
   * ```
   */
  refreshAt(timeMs: number): this {
    this._wheel._refreshAt(this, timeMs);
    return this;
  }

  /** Makes the timer keep the process alive while pending (the default). */
  ref(): this {
    this._wheel._setRef(this, true);
    return this;
  }

  /** Lets the process exit even though this timer is pending. */
  unref(): this {
    this._wheel._setRef(this, false);
    return this;
  }

  /** Whether the timer keeps the process alive while pending. */
  hasRef(): boolean {
    return !isUnrefDelay(this._delayMs);
  }

  /** Cancels the timer; lets `using h = wheel.schedule(...)` clean up at block exit. */
  [Symbol.dispose](): void {
    this.cancel();
  }
}
