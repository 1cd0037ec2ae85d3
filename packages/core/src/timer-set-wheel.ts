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
import { DUE, NEXT, OWNER, PREV, StackSlab } from './timer-set-slab.js';

/**
 * 256 buckets per level: a level-0 window of 256 ms and a level-1 window of 65 s, so the buffs
 * and cooldowns of a game (seconds to a minute) cascade once on their way down instead of twice
 * with 64 (each cascade is a cache miss per timer: 64 slots cost the periodic-effects benchmark
 * ~20% more CPU per tick).
 */
const SLOT_BITS = 8;
const SLOTS = 1 << SLOT_BITS;
const SLOT_MASK = SLOTS - 1;
/** 256^7 = 2^56 ticks: enough levels for any tick a double holds exactly. */
const MAX_LEVELS = 7;
/** 32-bit words of occupancy bitmap per level. */
const LEVEL_WORDS = SLOTS >>> 5;
/** Index 0 is the sentinel of the batch being fired (detached from the wheel). */
const BATCH = 0;
/**
 * `owner` of the batch sentinel. A bucket's sentinel holds `-2 - (level * 64 + slot)`, so that an
 * emptied bucket finds its occupancy bit without a search; real timers hold their key slot, >= 0.
 */
const BATCH_OWNER = -1;
const MAX_INT32_TICK = 0x7fffffff;
/** Batches for one tick in one pass before the wheel assumes callbacks re-arm themselves forever. */
const MAX_SAME_TICK_BATCHES = 10_000;

export abstract class SetWheel extends StackSlab {
  /** Game-time ms that tick 0 stands for. */
  readonly originMs: number;
  /** Timers filed in the wheel (not counting paused ones). */
  pending = 0;

  /** Slab index of slot 0's sentinel, per level; -1 until the level exists. */
  private readonly levelBase = new Int32Array(MAX_LEVELS).fill(-1);
  /** Occupancy bits, one per bucket: level `L`'s at words `L * LEVEL_WORDS ...`. */
  private readonly occupied = new Int32Array(MAX_LEVELS * LEVEL_WORDS);
  private levels = 0;
  private currentTick = 0;
  private armedTick = Infinity;
  private processing = false;
  private foundLevel = 0;
  private foundSlot = 0;
  private passErrors: unknown[] | undefined = undefined;
  private readonly driver: WakeupDriver;

  constructor(
    readonly clock: Clock,
    createDriver: (wake: () => void) => WakeupDriver,
  ) {
    super();
    // Index 0, the slab's first, is the batch's sentinel.
    this.take();
    this.w[(BATCH << 3) | NEXT] = BATCH;
    this.w[(BATCH << 3) | PREV] = BATCH;
    this.w[(BATCH << 3) | OWNER] = BATCH_OWNER;
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
    const current = this.currentTick;
    let tick = this.t[(s << 2) | DUE];
    if (tick < current) tick = current; // overdue: fire on the next pass
    let level: number;
    let slot: number;
    if (tick <= MAX_INT32_TICK) {
      const diff = tick ^ current;
      level = diff <= SLOT_MASK ? 0 : ((31 - Math.clz32(diff)) / SLOT_BITS) | 0;
      slot = (tick >>> (level * SLOT_BITS)) & SLOT_MASK;
    } else {
      // Past 2^31 ticks: the same digit arithmetic with division instead of shifts.
      level = 0;
      let span = 1;
      while (Math.floor(tick / (span * SLOTS)) !== Math.floor(current / (span * SLOTS))) {
        level++;
        span *= SLOTS;
      }
      slot = Math.floor(tick / span) % SLOTS;
    }
    if (level >= this.levels) this.addLevels(level);
    const sentinel = this.levelBase[level] + slot;
    const w = this.w;
    const tail = w[(sentinel << 3) | PREV];
    w[(tail << 3) | NEXT] = s;
    w[(s << 3) | PREV] = tail;
    w[(s << 3) | NEXT] = sentinel;
    w[(sentinel << 3) | PREV] = s;
    if (tail === sentinel) this.occupied[level * LEVEL_WORDS + (slot >>> 5)] |= 1 << (slot & 31);
    if (tick < this.armedTick && !this.processing) {
      this.armedTick = tick;
      this.driver.arm(this.originMs + tick);
    }
  }

  private unlink(s: number): void {
    const w = this.w;
    const p = w[(s << 3) | PREV];
    const n = w[(s << 3) | NEXT];
    w[(p << 3) | NEXT] = n;
    w[(n << 3) | PREV] = p;
    // Neighbours that are one index: only the sentinel is left, its bucket just became empty.
    if (p === n && p !== BATCH) {
      const code = -2 - this.w[(p << 3) | OWNER];
      this.occupied[(code >>> SLOT_BITS) * LEVEL_WORDS + ((code & SLOT_MASK) >>> 5)] &= ~(1 << (code & 31));
    }
  }

  private addLevels(upTo: number): void {
    if (upTo >= MAX_LEVELS) throw new RangeError(`tick beyond the wheel's ${MAX_LEVELS} levels`);
    while (this.levels <= upTo) {
      // take() hands out fresh indices in order, so a level's 64 sentinels are contiguous.
      let base = -1;
      for (let slot = 0; slot < SLOTS; slot++) {
        const sentinel = this.take();
        if (slot === 0) base = sentinel;
        this.w[(sentinel << 3) | NEXT] = sentinel;
        this.w[(sentinel << 3) | PREV] = sentinel;
        this.w[(sentinel << 3) | OWNER] = -2 - (this.levels * SLOTS + slot);
      }
      this.levelBase[this.levels++] = base;
    }
  }

  /** The tick of the next event at or above `fromLevel`, or -1; leaves its level and slot in `foundLevel`/`foundSlot`. */
  private nextEventTick(fromLevel = 0): number {
    const current = this.currentTick;
    for (let level = fromLevel, span = SLOTS ** fromLevel; level < this.levels; level++, span *= SLOTS) {
      const window = span * SLOTS;
      const slot = firstSetBit(this.occupied, level * LEVEL_WORDS, Math.floor(current / span) % SLOTS);
      if (slot >= 0) {
        this.foundLevel = level;
        this.foundSlot = slot;
        return Math.floor(current / window) * window + slot * span;
      }
    }
    return -1;
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
      const eventTick = this.nextEventTick();
      if (eventTick < 0 || eventTick > targetTick) break;
      sameTickBatches = eventTick === this.currentTick ? sameTickBatches + 1 : 0;
      if (sameTickBatches > MAX_SAME_TICK_BATCHES) {
        this.passErrors!.push(
          new Error(
            `TimerSet timers kept re-arming for game tick ${eventTick} ${MAX_SAME_TICK_BATCHES} times in one pass; they were moved to the next tick`,
          ),
        );
        this.currentTick = eventTick + 1;
        this.takeFoundBucket();
        this.cascadeBatch();
        return;
      }
      this.currentTick = eventTick;
      this.takeFoundBucket();
      if (this.foundLevel === 0) this.fireBatch(eventTick);
      else this.cascadeBatch();
    }
    if (targetTick > this.currentTick) this.currentTick = targetTick;
  }

  /** Moves the bucket `nextEventTick` found into the batch ring, so callbacks can refill its slot. */
  private takeFoundBucket(): void {
    const level = this.foundLevel;
    const slot = this.foundSlot;
    const sentinel = this.levelBase[level] + slot;
    const w = this.w;
    const first = w[(sentinel << 3) | NEXT];
    const last = w[(sentinel << 3) | PREV];
    w[(BATCH << 3) | NEXT] = first;
    w[(first << 3) | PREV] = BATCH;
    w[(BATCH << 3) | PREV] = last;
    w[(last << 3) | NEXT] = BATCH;
    w[(sentinel << 3) | NEXT] = sentinel;
    w[(sentinel << 3) | PREV] = sentinel;
    this.occupied[level * LEVEL_WORDS + (slot >>> 5)] &= ~(1 << (slot & 31));
  }

  /** Fires the batch, re-filing the stacks a lazy reschedule pushed later. */
  private fireBatch(tick: number): void {
    // Callbacks may delete stacks still in the batch: take them one at a time.
    for (let s = this.w[(BATCH << 3) | NEXT]; s !== BATCH; s = this.w[(BATCH << 3) | NEXT]!) {
      this.unlink(s);
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
      this.file(s);
    }
  }

  /** Arms the driver for the next event, or disarms it when nothing is filed. */
  private rearm(): void {
    if (this.pending === 0) {
      this.disarm();
      return;
    }
    const tick = this.nextEventTick();
    if (tick < 0) return;
    this.armedTick = tick;
    this.driver.arm(this.originMs + tick);
  }

  private disarm(): void {
    if (this.armedTick === Infinity) return;
    this.armedTick = Infinity;
    this.driver.disarm();
  }
}

/** Index of the first set bit at or after `from` in one level's bitmap (words `base ...`), or -1. */
function firstSetBit(words: Int32Array, base: number, from: number): number {
  let w = from >>> 5;
  let bits = words[base + w] & (-1 << (from & 31));
  for (;;) {
    if (bits !== 0) return (w << 5) + (31 - Math.clz32(bits & -bits));
    if (++w >= LEVEL_WORDS) return -1;
    bits = words[base + w]!;
  }
}
