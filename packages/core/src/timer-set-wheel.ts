/**
 * A TimerSet's timers in time: a hierarchical wheel over the slab.
 * Must not depend on: TimingWheel, TimerHandle (no object per timer) or the TimerSet class.
 *
 * # A TimerSet's timers: a hierarchical wheel over a slab
 *
 * A {@link TimerSet}'s timers are indices into typed arrays (the slab, `timer-set-slab.ts`),
 * with no object or closure per timer. This file orders them in time.
 *
 * ## The wheel
 * The slab is filed in a hierarchical timing wheel of the same design as {@link TimingWheel}
 * (see `timing-wheel.ts` for the full essay): 1 ms ticks of game time counted from `originMs`,
 * levels of 256 buckets created on demand, a timer filed at the level of the highest base-256
 * digit in which its due tick differs from the current tick, a coarse bucket cascading down when
 * the current tick reaches it, an occupancy bitmap per level to find the next event, refresh to
 * a later tick done lazily (the entry stays and is re-filed when its bucket comes up). A bucket
 * is an array of slab indices (`timer-set-levels.ts`): filing appends, removing only makes the
 * entry stale, and a bucket that comes up is read in order, its timers' slab entries loaded
 * `AHEAD` entries before they fire.
 *
 * It differs from `TimingWheel` only where a set needs less: one callback for every timer (the
 * set's `fire(stack)`), no per-timer ref/unref, no statistics, and one wheel size, 256. Its
 * single wake-up goes to a {@link WakeupDriver}: the set's `GameClock`, which turns it into
 * one handle on the outer wheel.
 *
 * ## Never early, never stuck
 * A timer due at game time `t` is due at tick `ceil(t - originMs)` and fires when the driver's
 * wake-up finds the clock at or past it. Callbacks run in due order (by tick, then in filing
 * order); a timer filed for the current tick from a callback fires in the same pass, and after
 * `MAX_SAME_TICK_BATCHES` batches for one tick the rest moves to the next tick with an error, so
 * a key that sets itself with 0 ms forever cannot hang the loop.
 */
import type { Clock, WakeupDriver } from './clocks/clock.js';
import { SetLevels } from './timer-set-levels.js';
import * as slab from './timer-set-slab.js';

// Module-level copies of the slab's field offsets: tsc's CommonJS output would read an imported
// constant from the slab module's exports object at every use (~10% more instructions per expiry
// under cachegrind); a local const folds into the code.
const { OWNER, DUE, STAMP } = slab;

/**
 * How many entries ahead of the one firing the batch loads a timer's slab entry; its key's
 * cells are loaded half as far ahead (by `fire`), once the slab entry that names the key is in.
 */
const AHEAD = 4;
/**
 * Stale entries tolerated beyond twice the live ones before `compact()` drops them all (8 bytes
 * each, so at most 16 per live timer; at once the live count, compaction cost 500 instructions
 * per delete + set at 200k keys).
 */
const STALE_SLACK = 1_024;

/** Batches for one tick in one pass before the wheel assumes callbacks re-arm themselves forever. */
const MAX_SAME_TICK_BATCHES = 10_000;

export abstract class SetWheel extends SetLevels {
  /** Game-time ms that tick 0 stands for. */
  readonly originMs: number;
  /** Timers filed in the wheel (not counting paused ones, nor stale entries). */
  pending = 0;
  /** Written only so that the batch loops' look-ahead loads are not optimised away (never read). */
  peek = 0;

  private armedTick = Infinity;
  private processing = false;
  private passErrors: unknown[] | undefined = undefined;
  private readonly driver: WakeupDriver;

  constructor(
    readonly clock: Clock,
    createDriver: (wake: () => void) => WakeupDriver,
  ) {
    super();
    this.originMs = Math.floor(clock.now());
    this.driver = createDriver(this.wake);
  }

  /** Runs when a timer comes due; the stack is already out of the wheel. */
  /** `ahead`: a stack this batch fires soon (or -1), whose key's cells `fire` may load early. */
  protected abstract fire(stack: number, ahead: number): void;

  /** Files stack `s` to fire `ms` of game time from now. */
  protected schedule(s: number, ms: number): void {
    this.t[(s << 2) | DUE] = Math.ceil(this.clock.now() - this.originMs + ms);
    this.pending++;
    this.file(s);
  }

  /** Moves a filed stack to `ms` from now: later in place (re-filed when its bucket comes up), earlier at once. */
  protected reschedule(s: number, ms: number): void {
    const due = Math.ceil(this.clock.now() - this.originMs + ms);
    if (due >= this.t[(s << 2) | DUE]) {
      this.t[(s << 2) | DUE] = due;
      return;
    }
    this.unlink(s);
    this.t[(s << 2) | DUE] = due;
    this.file(s);
    if (this.stale > 2 * this.pending + STALE_SLACK && !this.processing) this.compact();
  }

  /** Takes a filed stack out of the wheel; an emptied wheel gives its wake-up back. */
  protected unschedule(s: number): void {
    this.unlink(s);
    if (--this.pending === 0 && !this.processing) this.disarm();
    else if (this.stale > 2 * this.pending + STALE_SLACK && !this.processing) this.compact();
  }

  /**
   * Takes a filed stack out of use for good and frees its index. Its entry only goes stale (the
   * stamp in its own cache line moves on), so the index is free at once and a delete + set of a
   * key takes the very index it just gave up; a stale entry costs 8 bytes until its bucket comes
   * up, and `compact()` bounds them by the live ones.
   */
  protected discard(s: number): void {
    this.unschedule(s);
    this.freeStack(s);
  }

  /** Game-time ms until a filed stack fires; 0 when due. */
  protected remainingOf(s: number): number {
    const left = this.originMs + this.t[(s << 2) | DUE] - this.clock.now();
    return left > 0 ? left : 0;
  }

  /** Releases the wake-up for good. */
  protected closeWheel(): void {
    this.armedTick = Infinity;
    this.driver.close();
  }

  /** Links stack `s` into the bucket its due tick belongs to, and arms the driver if it is the soonest. */
  private file(s: number): void {
    const tick = this.link(s);
    if (tick < this.armedTick && !this.processing) {
      this.armedTick = tick;
      this.driver.arm(this.originMs + tick);
    }
  }

  /** The driver's callback: process everything due by now, then arm for what comes next. */
  private readonly wake = (): void => {
    this.armedTick = Infinity;
    const nowTick = Math.floor(this.clock.now() - this.originMs);
    const errors: unknown[] = [];
    this.processing = true;
    this.passErrors = errors;
    try {
      this.processUntil(nowTick);
    } finally {
      this.processing = false;
      this.passErrors = undefined;
      this.rearm();
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} TimerSet onExpire callbacks threw`);
  };

  private processUntil(targetTick: number): void {
    let sameTickBatches = 0;
    for (;;) {
      const bucket = this.nextEventBucket();
      if (bucket < 0) break;
      const eventTick = this.bucketTick(bucket);
      if (eventTick > targetTick) break;
      sameTickBatches = eventTick === this.currentTick ? sameTickBatches + 1 : 0;
      if (sameTickBatches > MAX_SAME_TICK_BATCHES) {
        this.passErrors!.push(
          new Error(
            `TimerSet timers kept re-arming for game tick ${eventTick} ${MAX_SAME_TICK_BATCHES} times in one pass; they were moved to the next tick`,
          ),
        );
        this.currentTick = eventTick + 1;
        this.takeBucket(bucket);
        this.cascadeBatch();
        return;
      }
      this.currentTick = eventTick;
      this.takeBucket(bucket);
      if (SetLevels.isDueBucket(bucket)) this.fireBatch(eventTick);
      else this.cascadeBatch();
    }
    if (targetTick > this.currentTick) this.currentTick = targetTick;
  }

  /** Fires the batch, dropping stale entries and re-filing the stacks a lazy reschedule pushed later. */
  private fireBatch(tick: number): void {
    // Callbacks may delete stacks still in the batch (their entries go stale) and grow the slab
    // (so `this.w` is read again after each), but never take another bucket: `batch` stays.
    const batch = this.batch;
    const n = this.batchLength;
    let peek = 0;
    for (let i = 0; i < n; i += 2) {
      const s = batch[i];
      if (i + 2 * AHEAD < n) peek |= this.w[(batch[i + 2 * AHEAD] << 3) | OWNER];
      if (this.w[(s << 3) | STAMP] !== batch[i + 1]) {
        this.stale--;
        continue;
      }
      if (this.t[(s << 2) | DUE] > tick) {
        this.link(s);
        continue;
      }
      this.pending--;
      try {
        this.fire(s, i + AHEAD < n ? batch[i + AHEAD] : -1);
      } catch (error) {
        this.passErrors!.push(error);
      }
    }
    this.peek = peek;
  }

  /** Files the batch's current entries again, one level down (or at the next tick); drops stale ones. */
  private cascadeBatch(): void {
    const batch = this.batch;
    let peek = 0;
    for (let i = 0, n = this.batchLength; i < n; i += 2) {
      if (i + 2 * AHEAD < n) peek |= this.w[(batch[i + 2 * AHEAD] << 3) | OWNER];
      if (this.w[(batch[i] << 3) | STAMP] === batch[i + 1]) this.link(batch[i]);
      else this.stale--;
    }
    this.peek = peek;
  }

  /** Arms the driver for the next event, or disarms it when nothing is filed. */
  private rearm(): void {
    if (this.pending === 0) {
      this.disarm();
      return;
    }
    const bucket = this.nextEventBucket();
    if (bucket < 0) return;
    const tick = this.bucketTick(bucket);
    this.armedTick = tick;
    this.driver.arm(this.originMs + tick);
  }

  /** Nothing live is filed: gives the wake-up back, and drops the stale entries left. */
  private disarm(): void {
    // Stale entries would otherwise wait for a wake-up that an empty wheel does not ask for.
    if (this.stale > 0) this.sweep();
    if (this.armedTick === Infinity) return;
    this.armedTick = Infinity;
    this.driver.disarm();
  }
}
