/**
 * WheelEngine: the hierarchical wheel's algorithm, written once, over a storage that is a parameter.
 *
 * Both wheels of core run on it: the `TimingWheel` (`timing-wheel.ts`), whose entries are the
 * `TimerHandle`s the user holds, linked into `Bucket` rings (`wheel-levels.ts`), and a
 * `TimerSet`'s wheel (`timer-set/set-wheel.ts`), whose entries are slab indices in typed-array
 * buckets. As in tokio-util's `time/wheel` (`stack.rs` makes the entries' storage a parameter of
 * one wheel), the algorithm owns filing with the arming of the one native timer, the passes with
 * their cascades and the runaway stop, the next-event search that arms the driver, and the
 * collection of callback errors; the storage ({@link WheelStorage}) only links, unlinks, takes a
 * bucket and visits, and answers where the next occupied bucket is. What an entry does when it
 * fires or is dropped belongs to the wheel that owns the engine ({@link WheelOwner}).
 *
 * The design itself (levels, slot arithmetic, cascades, the driver, never early, lazy re-filing)
 * is explained in `timing-wheel.ts`'s header; this file is where it happens.
 */
import { freshNow, type Clock, type WakeupDriver } from '../clocks/clock.js';
import type { TickScale } from './tick-scale.js';
import { TimerLoopError } from './timer-loop-error.js';

/** How many entries `rearm` looks at to find a coarse bucket's earliest timer. */
const REARM_SCAN_LIMIT = 256;

/**
 * Where a wheel's entries `E` are kept: levels of buckets `B`, and the batch `T` a bucket that
 * came up is taken into. Implemented by `WheelLevels` (linked handles) and `SetWheel` (slab indices).
 */
export interface WheelStorage<E, B, T> {
  /** Every tick before this one has been processed; the engine's passes move it. */
  currentTick: number;
  /** Files an entry that is not filed into the bucket of its due tick (an overdue one into the current tick's); returns the tick it is filed for (Infinity: never fires). */
  link(entry: E): number;
  /** Takes a filed entry out of its bucket; returns true when that emptied the bucket. */
  unlink(entry: E): boolean;
  /** The due tick an entry holds now (a lazy refresh may have moved it past its bucket). */
  tickOf(entry: E): number;
  /** The bucket of the next event at `fromLevel` or above: a level-0 bucket to fire or a coarser one to cascade. */
  nextEventBucket(fromLevel?: number): B | undefined;
  /** The tick a filed bucket comes up at, in the current window of its level. */
  startOf(bucket: B): number;
  /** True for a level-0 bucket, whose entries fire; false for a coarser one, whose entries cascade. */
  isFine(bucket: B): boolean;
  /** The start of the next occupied bucket after `bucket` at its level, or of the next event above it; -1 when neither exists. */
  nextEventAfter(bucket: B): number;
  /** The earliest due tick of the entries of a filed bucket; -1 when it holds more than `limit`. */
  earliestDueIn(bucket: B, limit: number): number;
  /** Empties a filed bucket into a batch, so that callbacks can refill its slot. */
  take(bucket: B): T;
  /** The next entry of a batch, out of the wheel, or undefined when the batch is done. */
  shift(batch: T): E | undefined;
  /** Calls `visit` on every filed entry (it may unlink the one it is given). */
  forEach(visit: (entry: E) => void): void;
  /** Nothing is pending any more: drop whatever the storage still keeps for entries that left. */
  emptied(): void;
}

/** What the engine asks of the wheel that owns it about its entries. */
export interface WheelOwner<E> {
  /** Entries waiting to fire. */
  _pendingCount(): number;
  /** Runs an entry that came due and is out of the wheel; what it throws is the engine's to report. */
  _fireEntry(entry: E): void;
  /** An entry out of the wheel that will not fire (a runaway, or its wheel closed during a pass). */
  _dropEntry(entry: E): void;
  /** A callback threw, before `onError` sees it: diagnostics. */
  _callbackThrew(error: unknown, entry: E): void;
  /** True when a wake-up must be timed and reported (`_woke`). */
  _observed(): boolean;
  /** A wake-up ended: how late it was, how many entries fired, how long their callbacks ran (ms). */
  _woke(lateMs: number, fired: number, callbackMs: number): void;
}

/** What an engine is built with. */
export interface WheelEngineOptions<E> {
  readonly clock: Clock;
  readonly scale: TickScale;
  /** Builds the driver that calls `wake` (the clock's own, or a native one). */
  readonly createDriver: (wake: () => void) => WakeupDriver;
  /** Rounds of entries re-arming for the tick being fired, in one pass, before they are dropped. */
  readonly loopLimit: number;
  /** Receives callback errors and `TimerLoopError`s; without it they are thrown after the pass. */
  readonly onError: ((error: unknown, entry: E) => void) | undefined;
  /** What threw, for the message of an `AggregateError` of several ("timer callbacks"). */
  readonly callbacksName: string;
}

/** The algorithm of a hierarchical wheel over the storage `S` (see the module comment). */
export class WheelEngine<E, B, T> {
  /** Set while callbacks run, so that arming happens once at the end of the pass. */
  processing = false;
  closed = false;
  fired = 0;
  wakeups = 0;
  cascaded = 0;
  refiled = 0;

  private readonly clock: Clock;
  private readonly scale: TickScale;
  private readonly driver: WakeupDriver;
  /** The tick the driver is armed for; Infinity when disarmed, -Infinity during a pass. */
  private armedTick = Infinity;
  readonly loopLimit: number;
  private readonly onError: ((error: unknown, entry: E) => void) | undefined;
  private readonly callbacksName: string;
  private passErrors: unknown[] | undefined = undefined;
  private loopError: TimerLoopError | undefined = undefined;

  constructor(
    private readonly storage: WheelStorage<E, B, T>,
    private readonly owner: WheelOwner<E>,
    options: WheelEngineOptions<E>,
  ) {
    this.clock = options.clock;
    this.scale = options.scale;
    this.loopLimit = options.loopLimit;
    this.onError = options.onError;
    this.callbacksName = options.callbacksName;
    this.driver = options.createDriver(this.wake);
  }

  // ## Filing and arming

  /**
   * Links an entry that is not filed into its bucket, and arms the driver if it is now the
   * soonest. During a pass `armedTick` is -Infinity, so the one compare also stands for "not
   * while processing" (`rearm` arms once at the end of the pass).
   */
  file(entry: E): void {
    const tick = this.storage.link(entry);
    if (tick < this.armedTick) {
      this.armedTick = tick;
      this.driver.arm(this.scale.timeOfTick(tick));
    }
  }

  /** Nothing is pending: the storage drops its leftovers and the native timer is given back. */
  idle(): void {
    this.storage.emptied();
    this.disarm();
  }

  /** Tells the driver whether its wake-up keeps the process alive. */
  setRef(ref: boolean): void {
    this.driver.setRef(ref);
  }

  /** Drops every filed entry and releases the driver for good. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const storage = this.storage;
    storage.forEach((entry) => {
      storage.unlink(entry);
      this.owner._dropEntry(entry);
    });
    this.armedTick = Infinity;
    this.driver.close();
  }

  private disarm(): void {
    if (this.armedTick === Infinity) return;
    this.armedTick = Infinity;
    this.driver.disarm();
  }

  /** Arms the driver for the next event, or gives it back when nothing is pending. */
  private rearm(): void {
    if (this.closed || this.owner._pendingCount() === 0) {
      if (!this.closed) this.storage.emptied();
      this.disarm();
      return;
    }
    const storage = this.storage;
    const bucket = storage.nextEventBucket();
    if (bucket === undefined) return; // only parked entries: nothing will ever be due
    let tick = storage.startOf(bucket);
    if (!storage.isFine(bucket)) {
      // A coarse bucket's event is only a cascade: waking at its earliest due tick instead saves
      // the wake-ups in between, but never past the next event elsewhere (lazily refreshed
      // entries can make the bucket's earliest later than that).
      const earliest = storage.earliestDueIn(bucket, REARM_SCAN_LIMIT);
      if (earliest > tick) tick = earliest;
      const next = storage.nextEventAfter(bucket);
      if (next >= 0 && next < tick) tick = next;
    }
    this.armedTick = tick;
    this.driver.arm(this.scale.timeOfTick(tick));
  }

  // ## The passes: what happens when the driver wakes the wheel

  /** The driver's callback: process everything due by a fresh reading, then arm for what comes next. */
  private readonly wake = (): void => {
    this.wakeups++;
    const armedTick = this.armedTick;
    this.armedTick = Infinity;
    if (this.closed) return;
    const now = freshNow(this.clock);
    const nowTick = this.scale.nowTick(now);
    // Timing the pass costs two clock reads: only when someone listens.
    const observed = this.owner._observed();
    const firedBefore = this.fired;
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
      const armedAt = armedTick === Infinity ? now : this.scale.timeOfTick(armedTick);
      this.owner._woke(now - armedAt, this.fired - firedBefore, performance.now() - passStart);
    }
    const loopError = this.loopError;
    this.loopError = undefined;
    const thrown =
      errors.length === 1
        ? errors[0]
        : errors.length > 1
          ? new AggregateError(errors, `${errors.length} ${this.callbacksName} threw`)
          : undefined;
    if (loopError !== undefined) {
      if (thrown !== undefined)
        Object.defineProperty(loopError, 'cause', { value: thrown, configurable: true, writable: true });
      throw loopError;
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- a callback's error is rethrown as it was thrown
    if (thrown !== undefined) throw thrown;
  };

  /**
   * Processes every event up to `targetTick`, then leaves the current tick there: walks from
   * occupied bucket to occupied bucket, cascades a coarse one a level down, fires a level-0 one.
   * Entries that keep re-arming for the tick being fired (a `refresh(0)` loop, a key set again
   * with 0 ms from its own expiry) would never let time move: once `loopLimit` rounds in one
   * pass have fired the same tick, the next round is dropped instead (`stopLoop`).
   */
  private processUntil(targetTick: number): void {
    const storage = this.storage;
    let lastFiredTick = -Infinity;
    let rounds = 0;
    for (;;) {
      const bucket = storage.nextEventBucket();
      if (bucket === undefined) break;
      const eventTick = storage.startOf(bucket);
      if (eventTick > targetTick || this.closed) break;
      storage.currentTick = eventTick;
      const fine = storage.isFine(bucket);
      const batch = storage.take(bucket);
      if (!fine) {
        this.cascade(batch);
        continue;
      }
      rounds = eventTick === lastFiredTick ? rounds + 1 : 0;
      lastFiredTick = eventTick;
      if (rounds >= this.loopLimit) this.stopLoop(batch, eventTick);
      else this.fireBatch(batch, eventTick);
    }
    if (targetTick > storage.currentTick) storage.currentTick = targetTick;
  }

  /** Fires a level-0 batch due at `tick`, re-filing the entries a lazy refresh pushed later. */
  private fireBatch(batch: T, tick: number): void {
    // Callbacks may cancel or refresh entries still in the batch: take them one at a time.
    const storage = this.storage;
    for (;;) {
      const entry = storage.shift(batch);
      if (entry === undefined) return;
      if (this.closed) {
        // A callback closed the wheel: what is left of the batch is dropped, not fired.
        this.owner._dropEntry(entry);
        continue;
      }
      if (storage.tickOf(entry) > tick) {
        this.refiled++;
        this.file(entry);
        continue;
      }
      this.fired++;
      try {
        this.owner._fireEntry(entry);
      } catch (error) {
        this.report(error, entry);
      }
    }
  }

  /** Files a coarse batch's entries again: relative to the new current tick they drop a level. */
  private cascade(batch: T): void {
    const storage = this.storage;
    for (;;) {
      const entry = storage.shift(batch);
      if (entry === undefined) return;
      this.cascaded++;
      this.file(entry);
    }
  }

  /** Drops a batch that kept re-arming for `tick`, and reports it once. */
  private stopLoop(batch: T, tick: number): void {
    const storage = this.storage;
    let first: E | undefined;
    let dropped = 0;
    for (;;) {
      const entry = storage.shift(batch);
      if (entry === undefined) break;
      first ??= entry;
      this.owner._dropEntry(entry);
      dropped++;
    }
    const error = new TimerLoopError(this.loopLimit, this.scale.timeOfTick(tick), dropped);
    if (this.onError !== undefined && first !== undefined) this.report(error, first);
    else this.loopError ??= error;
  }

  /** Hands a callback's error to `onError`, or keeps it to throw after the pass. */
  private report(error: unknown, entry: E): void {
    this.owner._callbackThrew(error, entry);
    if (this.onError !== undefined) {
      try {
        this.onError(error, entry);
        return;
      } catch (handlerError) {
        error = handlerError;
      }
    }
    this.passErrors!.push(error);
  }
}
