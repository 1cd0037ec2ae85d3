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
 * is a ring of indices whose sentinel is itself an index of the slab (256 of them per level,
 * allocated with the level), so linking and unlinking are the same few array writes everywhere.
 *
 * It differs from `TimingWheel` only where a set needs less: one callback for every timer (the
 * set's `fire(stack)`), no per-timer ref/unref, no statistics, and one wheel size, 256. Its
 * single wake-up goes to a {@link WakeupDriver}: the set's `PausableClock`, which turns it into
 * one handle on the outer wheel.
 *
 * ## Never early, never stuck
 * A timer due at game time `t` is due at tick `ceil(t - originMs)` and fires when the driver's
 * wake-up finds the clock at or past it. Callbacks run in due order (by tick, then in filing
 * order); a timer filed for the current tick from a callback fires in the same pass, and after
 * `MAX_SAME_TICK_BATCHES` batches for one tick the rest moves to the next tick with an error, so
 * a key that sets itself with 0 ms forever cannot hang the loop.
 */
import type { Clock, WakeupDriver } from './clock.js';
import { BATCH, SetLevels } from './timer-set-levels.js';
import * as slab from './timer-set-slab.js';

// Module-level copies of the slab's field offsets: tsc's CommonJS output would read an imported
// constant from the slab module's exports object at every use (~10% more instructions per expiry
// under cachegrind); a local const folds into the code.
const { NEXT, OWNER, DUE, DEAD } = slab;

/** Batches for one tick in one pass before the wheel assumes callbacks re-arm themselves forever. */
const MAX_SAME_TICK_BATCHES = 10_000;

export abstract class SetWheel extends SetLevels {
  /** Game-time ms that tick 0 stands for. */
  readonly originMs: number;
  /** Timers filed in the wheel (not counting paused ones, nor discarded ones still filed). */
  pending = 0;
  /** Discarded timers still filed, freed when their bucket comes up (see `discard`). */
  dead = 0;

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
  protected abstract fire(stack: number): void;

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
  }

  /** Takes a filed stack out of the wheel; an emptied wheel gives its wake-up back. */
  protected unschedule(s: number): void {
    this.unlink(s);
    if (--this.pending === 0 && !this.processing) this.disarm();
  }

  /**
   * Takes a filed stack out of use for good and frees its index. Lazily while discarded ones are
   * no more than the live ones: the stack is only marked DEAD, in its own cache line, and stays
   * filed until its bucket comes up; unlinking it now would load both neighbours in its ring, two
   * cache misses at a random place in a million (half the cost of a delete + set at 1M keys). The
   * bound keeps the slab at most twice the live timers whatever the pattern of deletes.
   */
  protected discard(s: number): void {
    if (this.dead + 1 < this.pending) {
      this.w[(s << 3) | OWNER] = DEAD;
      this.dead++;
      if (--this.pending === 0 && !this.processing) this.disarm();
      return;
    }
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

  /** Fires the batch, re-filing the stacks a lazy reschedule pushed later. */
  private fireBatch(tick: number): void {
    // Callbacks may delete stacks still in the batch: take them one at a time.
    for (let s = this.w[(BATCH << 3) | NEXT]; s !== BATCH; s = this.w[(BATCH << 3) | NEXT]!) {
      this.unlink(s);
      if (this.w[(s << 3) | OWNER] === DEAD) {
        this.bury(s);
        continue;
      }
      if (this.t[(s << 2) | DUE] > tick) {
        this.file(s);
        continue;
      }
      this.pending--;
      try {
        this.fire(s);
      } catch (error) {
        this.passErrors!.push(error);
      }
    }
  }

  private cascadeBatch(): void {
    for (let s = this.w[(BATCH << 3) | NEXT]; s !== BATCH; s = this.w[(BATCH << 3) | NEXT]!) {
      this.unlink(s);
      if (this.w[(s << 3) | OWNER] === DEAD) this.bury(s);
      else this.file(s);
    }
  }

  /** Frees a discarded stack that its bucket just gave up. */
  private bury(s: number): void {
    this.dead--;
    this.freeStack(s);
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

  /** Nothing live is filed: gives the wake-up back, and frees discarded stacks still filed. */
  private disarm(): void {
    // Discarded stacks still filed would otherwise wait for a wake-up that an empty wheel does
    // not ask for; sweeping them is paid for by the discards that left them.
    if (this.dead > 0) {
      this.sweep();
      this.dead = 0;
    }
    if (this.armedTick === Infinity) return;
    this.armedTick = Infinity;
    this.driver.disarm();
  }
}
