/**
 * SetWheel: a TimerSet's timers in time, a hierarchical wheel of slab indices on the set's game clock.
 *
 * # A TimerSet's timers: a hierarchical wheel over a slab
 *
 * A {@link TimerSet}'s timers are indices into typed arrays (the slab, `slab.ts`), with no object
 * or closure per timer. This wheel orders them in time and tells its {@link ExpirySink} (the key
 * table) when one comes due.
 *
 * ## Why a second wheel, and not the core wheel's levels
 * A set keeps a scheduler of its own for memory: slab indices in array buckets hold a timer in
 * far fewer bytes than the `TimerHandle`, Map entry and closure per timer that the core wheel
 * would need (the game suite's `heap-per-buff` row, "core wheel + Map"), while per tick the two
 * execute about as many instructions (its `instructions-per-tick-periodic` row), so speed does
 * not decide it. The algorithm is the core wheel's, storage aside, as tokio-util keeps one
 * wheel with its storage as a parameter (`time/wheel/stack.rs`): the digit arithmetic and the
 * occupancy search are `wheel/wheel-levels.ts`'s pure functions, and the pass loop with its
 * runaway guard is `wheel/wheel-pass.ts`'s `runPass`, which walks this wheel's buckets.
 *
 * ## Levels and buckets
 * Ticks are 1 ms of game time counted from `originMs`. Level `L` has 256 buckets of 256^L ticks
 * each, created on demand; a timer sits at the level of the highest base-256 digit in which its
 * due tick differs from the current tick, in the bucket that digit names. One occupancy bit per
 * bucket makes the next event a find-first-set away. When the current tick reaches a coarse
 * bucket, its timers cascade one level down (or fire, on level 0). 256 buckets give a level-0
 * window of 256 ms and a level-1 window of 65 s, so the buffs and cooldowns of a game (seconds
 * to a minute) cascade once on their way down.
 *
 * | due tick (current 0x0000) | differs first in digit | filed at        |
 * |---------------------------|------------------------|-----------------|
 * | 0x00f0 (240 ms)           | 0                      | level 0, slot 240 |
 * | 0x1388 (5 s)              | 1                      | level 1, slot 19  |
 * | 0xea60 (60 s)             | 1                      | level 1, slot 234 |
 * | 0x0493e0 (5 min)          | 2                      | level 2, slot 4   |
 *
 * A bucket is an array of entries, each a slab index and the index's `STAMP` when it was filed.
 * Filing appends; a timer never leaves its bucket early. A timer taken out of the wheel (deleted,
 * paused, or moved earlier) gets a new stamp instead, which makes its entry stale: it is dropped
 * when its bucket comes up, or by `compact()` when stale entries outnumber live ones. So filing
 * and removing touch no other timer, and a bucket that comes up is read in order: the wheel loads
 * the slab entries a few ahead of the one it is firing, so that their cache misses overlap instead
 * of following each other along a linked ring. A refresh to a later tick is lazy: the entry stays
 * and is re-filed when its bucket comes up.
 *
 * ## Never early, never stuck
 * A timer due at game time `t` is due at tick `ceil(t - originMs)` and fires when the driver's
 * wake-up finds the clock at or past it. Callbacks run in due order (by tick, then in filing
 * order); a timer filed for the current tick from a callback fires in the same pass. Timers that
 * keep re-arming for the tick being fired (a key that sets itself with 0 ms from its own expiry)
 * get the core wheel's policy: after `loopLimit` rounds in one pass (the outer wheel's option)
 * they are cancelled, their keys removed, and one `TimerLoopError` is thrown after the pass,
 * which the outer wheel hands to its `onError` (or throws out of `clock.advance()`). The single wake-up goes to a
 * {@link WakeupDriver}: the set's `GameClock`, which turns it into one handle on the outer wheel.
 */
import type { Clock, WakeupDriver } from '../clocks/clock.js';
import { TimerLoopError } from '../wheel/timer-loop-error.js';
import * as levelMath from '../wheel/wheel-levels.js';
import { runPass, type PassActions, type PassLevels } from '../wheel/wheel-pass.js';
import * as slabFields from './slab.js';
import { grown, type StackSlab } from './slab.js';

// Module-level copies of the slab's field offsets: tsc's CommonJS output would read an imported
// constant from the slab module's exports object at every use; a local const folds into the code.
const { OWNER, DUE, STAMP } = slabFields;
const { firstSetBit, levelAndSlotOfLargeTick, levelOf, levelOfBitTable, slotOf, startOfSlot } = levelMath;

/** Who hears of a timer that came due: the key table. */
export interface ExpirySink {
  /**
   * Stack `s` came due and is out of the wheel. `ahead` is a stack this batch fires soon (or -1),
   * whose key's cells the sink may start loading.
   */
  fire(s: number, ahead: number): void;
  /** Stack `s` kept re-arming for the tick being fired and is out of the wheel for good: drop it without reporting it. */
  cancel(s: number): void;
}

const SLOT_BITS = 8;
const SLOTS = 1 << SLOT_BITS;
const SLOT_MASK = SLOTS - 1;
/** 256^7 = 2^56 ticks: enough levels for any tick a double holds exactly. */
const MAX_LEVELS = 7;
/** 32-bit words of occupancy bitmap per level. */
const LEVEL_WORDS = SLOTS >>> 5;
const { MAX_INT32_TICK } = levelMath;
/** The level of each highest differing bit, for base-256 digits. */
const LEVEL_OF_BIT = levelOfBitTable(SLOT_BITS);

/** How many entries ahead of the one firing the batch loads a timer's slab entry (the sink loads its key half as far ahead). */
const AHEAD = 4;
/** Stale entries tolerated beyond twice the live ones before `compact()` drops them all. */
const STALE_SLACK = 1_024;

/**
 * A bucket that never held anything: its count (element 0) is 0, and it gets an array of its own
 * on its first entry, so nothing is ever written here.
 */
const EMPTY = new Int32Array(1);

/**
 * The bucket a timer due at `tick` is filed in when the wheel is at `current` (`tick >= current`):
 * `level * 256 + slot`, the level being the highest base-256 digit in which the two differ and the
 * slot that digit of `tick`. Pure, and exact for every tick a double holds.
 */
export function bucketOf(tick: number, current: number): number {
  if (tick > MAX_INT32_TICK) {
    const [level, slot] = levelAndSlotOfLargeTick(tick, current, SLOTS);
    return level * SLOTS + slot;
  }
  const level = levelOf(tick, current, SLOT_MASK, LEVEL_OF_BIT);
  return (level << SLOT_BITS) | slotOf(tick, level, SLOT_BITS, SLOT_MASK);
}

/**
 * The tick at which bucket `bucket` (from {@link bucketOf} or the occupancy search) comes up,
 * seen from `current`: the start of its slot in the current window of its level. Pure.
 */
export function bucketStart(bucket: number, current: number): number {
  const span = SLOTS ** (bucket >>> SLOT_BITS);
  return startOfSlot(current, bucket & SLOT_MASK, span, span * SLOTS);
}

/** The storage `runPass` walks for a set (buckets named by `level * 256 + slot`), and what it does with each. */
export class SetWheel implements PassLevels<number>, PassActions<number> {
  /** Game-time ms that tick 0 stands for. */
  readonly originMs: number;
  /** Timers filed in the wheel (not counting paused ones, nor stale entries). */
  pending = 0;
  /** Entries filed but stale (their timer's stamp moved on): dropped when met, or by `compact`. */
  stale = 0;
  /** Written only so that the batch loops' look-ahead loads are not optimised away (never read). */
  peek = 0;

  /** The tick the wheel has processed up to; buckets are relative to it (`runPass` moves it). */
  currentTick = 0;
  /** The entries taken out of a bucket by `takeBucket`: `batch[i]` a slab index, `batch[i + 1]` its stamp. */
  private batch: Int32Array = new Int32Array(64);
  private batchLength = 0;
  /**
   * Bucket `level * 256 + slot`: its count of int32s in use at element 0, then its entries
   * (pairs, as in `batch`). The table covers only the levels used so far (`addLevels`), so that a
   * set per entity stays small, and grows by `push`, never by assigning the field again (an
   * assigned field loses V8's constant-field tracking, which every expiry pays for).
   */
  private readonly entries: Int32Array[] = [];
  /** Occupancy bits, one per bucket: level `L`'s at words `L * LEVEL_WORDS ...`. */
  private readonly occupied = new Int32Array(MAX_LEVELS * LEVEL_WORDS);
  /** Per level in use, a view of its words of `occupied`: what the shared occupancy search reads. */
  private readonly levelWords: Int32Array[] = [];
  private levels = 0;
  private armedTick = Infinity;
  private processing = false;
  private passErrors: unknown[] | undefined = undefined;
  private readonly driver: WakeupDriver;

  /**
   * @param loopLimit - rounds of timers re-arming for the tick being fired, in one pass, before
   *   they are cancelled: the outer wheel's `loopLimit`
   */
  constructor(
    private readonly slab: StackSlab,
    readonly clock: Clock,
    createDriver: (wake: () => void) => WakeupDriver,
    private readonly sink: ExpirySink,
    private readonly loopLimit: number,
  ) {
    this.originMs = Math.floor(clock.now());
    this.driver = createDriver(this.wake);
  }

  /** Files stack `s` to fire `ms` of game time from now. */
  schedule(s: number, ms: number): void {
    this.slab.t[(s << 2) | DUE] = Math.ceil(this.clock.now() - this.originMs + ms);
    this.pending++;
    this.file(s);
  }

  /** Moves a filed stack to `ms` from now: later in place (re-filed when its bucket comes up), earlier at once. */
  reschedule(s: number, ms: number): void {
    const t = this.slab.t;
    const due = Math.ceil(this.clock.now() - this.originMs + ms);
    if (due >= t[(s << 2) | DUE]) {
      t[(s << 2) | DUE] = due;
      return;
    }
    this.unlink(s);
    t[(s << 2) | DUE] = due;
    this.file(s);
    if (this.stale > 2 * this.pending + STALE_SLACK && !this.processing) this.compact();
  }

  /** Takes a filed stack out of the wheel; an emptied wheel gives its wake-up back. */
  unschedule(s: number): void {
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
  discard(s: number): void {
    this.unschedule(s);
    this.slab.free(s);
  }

  /** Game-time ms until a filed stack fires; 0 when due. */
  remainingOf(s: number): number {
    const left = this.originMs + this.slab.t[(s << 2) | DUE] - this.clock.now();
    return left > 0 ? left : 0;
  }

  /** Releases the wake-up for good. */
  close(): void {
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

  /** Appends stack `s`, with its current stamp, to the bucket its due tick belongs to; returns the tick it is filed for. */
  private link(s: number): number {
    const current = this.currentTick;
    let tick = this.slab.t[(s << 2) | DUE];
    if (tick < current) tick = current; // overdue: fire on the next pass
    const bucket = bucketOf(tick, current);
    if (bucket >>> SLOT_BITS >= this.levels) this.addLevels(bucket >>> SLOT_BITS);
    let entries = this.entries[bucket];
    const n = entries[0];
    if (n + 1 === entries.length) entries = this.growBucket(bucket);
    entries[n + 1] = s;
    entries[n + 2] = this.slab.w[(s << 3) | STAMP];
    entries[0] = n + 2;
    if (n === 0) this.occupied[bucket >>> 5] |= 1 << (bucket & 31);
    return tick;
  }

  /** Makes stack `s`'s filed entry stale: the timer is out of the wheel from now on. */
  private unlink(s: number): void {
    this.slab.w[(s << 3) | STAMP]++;
    this.stale++;
  }

  /** A bucket's array, doubled (kept out of `link` so that `link` stays small enough to inline). */
  private growBucket(bucket: number): Int32Array {
    const entries = this.entries[bucket];
    const size = entries.length < 9 ? 9 : 2 * entries.length - 1; // the count, then room for 4, 8, 16 ... pairs
    return (this.entries[bucket] = grown(entries, new Int32Array(size)));
  }

  /** Extends `entries` to levels `0 ..= upTo`; the lower levels keep their buckets in place. */
  private addLevels(upTo: number): void {
    if (upTo >= MAX_LEVELS) throw new RangeError(`tick beyond the wheel's ${MAX_LEVELS} levels`);
    const levels = upTo + 1;
    const entries = this.entries;
    for (let b = entries.length; b < levels * SLOTS; b++) entries.push(EMPTY);
    for (let l = this.levelWords.length; l < levels; l++) {
      this.levelWords.push(this.occupied.subarray(l * LEVEL_WORDS, (l + 1) * LEVEL_WORDS));
    }
    this.levels = levels;
  }

  /**
   * The bucket of the next event (`level * SLOTS + slot`: a small integer, so returning it
   * allocates nothing), or undefined when nothing is filed.
   */
  nextEventBucket(): number | undefined {
    const current = this.currentTick;
    for (let level = 0, span = 1; level < this.levels; level++, span *= SLOTS) {
      const slot = firstSetBit(this.levelWords[level], Math.floor(current / span) % SLOTS);
      if (slot >= 0) return level * SLOTS + slot;
    }
    return undefined;
  }

  /** The tick `bucket` comes up at. */
  startOf(bucket: number): number {
    return bucketStart(bucket, this.currentTick);
  }

  /** True for a level-0 bucket (it fires); a coarser one cascades. */
  isFine(bucket: number): boolean {
    return bucket < SLOTS;
  }

  /** Moves a bucket's entries into `batch`, so callbacks can refill its slot. */
  private takeBucket(bucket: number): void {
    const entries = this.entries[bucket];
    const n = entries[0];
    // Copied, not swapped: each bucket keeps the array it grew to (swapped arrays of different
    // sizes would make buckets grow again and again).
    if (n > this.batch.length) this.batch = new Int32Array(Math.max(n, this.batch.length * 2));
    // A loop, not `set(subarray())`: the view would be an allocation per bucket.
    const batch = this.batch;
    for (let i = 0; i < n; i++) batch[i] = entries[i + 1];
    this.batchLength = n;
    entries[0] = 0;
    this.occupied[bucket >>> 5] &= ~(1 << (bucket & 31));
  }

  /** The driver's callback: process everything due by now, then arm for what comes next. */
  private readonly wake = (): void => {
    this.armedTick = Infinity;
    const nowTick = Math.floor(this.clock.now() - this.originMs);
    const errors: unknown[] = [];
    this.processing = true;
    this.passErrors = errors;
    try {
      runPass(this, this, nowTick, this.loopLimit);
    } finally {
      this.processing = false;
      this.passErrors = undefined;
      this.rearm();
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} TimerSet onExpire callbacks threw`);
  };

  /** A set's wheel is never closed during a pass: `close()` comes after every key was released. */
  _halted(): boolean {
    return false;
  }

  _cascadeBucket(bucket: number): void {
    this.takeBucket(bucket);
    this.cascadeBatch();
  }

  _fireBucket(bucket: number, tick: number): void {
    this.takeBucket(bucket);
    this.fireBatch(tick);
  }

  /** Cancels the live stacks of a bucket that kept re-arming for `tick` (their keys lose them), and reports it once. */
  _stopLoop(bucket: number, tick: number): void {
    this.takeBucket(bucket);
    const w = this.slab.w;
    const batch = this.batch;
    let cancelled = 0;
    for (let i = 0, n = this.batchLength; i < n; i += 2) {
      const s = batch[i];
      if (w[(s << 3) | STAMP] !== batch[i + 1]) {
        this.stale--;
        continue;
      }
      this.pending--;
      cancelled++;
      this.sink.cancel(s);
    }
    this.passErrors!.push(new TimerLoopError(this.loopLimit, this.originMs + tick, cancelled));
  }

  /** Fires the batch, dropping stale entries and re-filing the stacks a lazy reschedule pushed later. */
  private fireBatch(tick: number): void {
    // Callbacks may delete stacks still in the batch (their entries go stale) and grow the slab
    // (so `slab.w` is read again after each), but never take another bucket: `batch` stays.
    const slab = this.slab;
    const sink = this.sink;
    const batch = this.batch;
    const n = this.batchLength;
    let peek = 0;
    for (let i = 0; i < n; i += 2) {
      const s = batch[i];
      if (i + 2 * AHEAD < n) peek |= slab.w[(batch[i + 2 * AHEAD] << 3) | OWNER];
      if (slab.w[(s << 3) | STAMP] !== batch[i + 1]) {
        this.stale--;
        continue;
      }
      if (slab.t[(s << 2) | DUE] > tick) {
        this.link(s);
        continue;
      }
      this.pending--;
      try {
        sink.fire(s, i + AHEAD < n ? batch[i + AHEAD] : -1);
      } catch (error) {
        this.passErrors!.push(error);
      }
    }
    this.peek = peek;
  }

  /** Files the batch's current entries again, one level down; drops stale ones. */
  private cascadeBatch(): void {
    const w = this.slab.w;
    const batch = this.batch;
    let peek = 0;
    for (let i = 0, n = this.batchLength; i < n; i += 2) {
      if (i + 2 * AHEAD < n) peek |= w[(batch[i + 2 * AHEAD] << 3) | OWNER];
      if (w[(batch[i] << 3) | STAMP] === batch[i + 1]) this.link(batch[i]);
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
    if (bucket === undefined) return;
    const tick = bucketStart(bucket, this.currentTick);
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

  /** Empties every bucket: for a wheel whose entries are all stale. O(buckets). */
  private sweep(): void {
    for (const entries of this.entries) entries[0] = 0;
    this.occupied.fill(0);
    this.stale = 0;
  }

  /** Drops every stale entry, keeping the others in order. O(entries); not while a batch is being read. */
  private compact(): void {
    const w = this.slab.w;
    for (let level = 0; level < this.levels; level++) {
      const words = this.levelWords[level];
      for (let slot = firstSetBit(words, 0); slot >= 0;) {
        const bucket = (level << SLOT_BITS) | slot;
        const entries = this.entries[bucket];
        const kept = keepCurrent(entries, w);
        entries[0] = kept;
        if (kept === 0) this.occupied[bucket >>> 5] &= ~(1 << (bucket & 31));
        slot = slot + 1 < SLOTS ? firstSetBit(words, slot + 1) : -1;
      }
    }
    this.stale = 0;
  }
}

/** Moves a bucket's entries whose stamp is current to its front, in order; returns their count of int32s. */
function keepCurrent(entries: Int32Array, w: Int32Array): number {
  const n = entries[0];
  let kept = 0;
  for (let i = 1; i <= n; i += 2) {
    const s = entries[i];
    const stamp = entries[i + 1];
    if (w[(s << 3) | STAMP] !== stamp) continue;
    entries[kept + 1] = s;
    entries[kept + 2] = stamp;
    kept += 2;
  }
  return kept;
}
