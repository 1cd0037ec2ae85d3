/**
 * The level buckets of a TimerSet's wheel: arrays of slab indices and their occupancy bitmaps.
 * Must not depend on: the clock, the wake-up driver or the keys (timer-set-wheel.ts runs passes over this).
 *
 * Where a timer goes and where the next one is: level `L` has 256 buckets of 256^L ticks each,
 * a timer sits at the level of the highest base-256 digit in which its due tick differs from the
 * current tick, and one bit per bucket says whether it holds anything, so the next event is a
 * find-first-set away. See timer-set-wheel.ts for the design of the wheel as a whole.
 *
 * A bucket is an array of entries, each a slab index and the index's `STAMP` when it was filed.
 * Filing appends; a timer never leaves its bucket early. A timer taken out of the wheel (deleted,
 * paused, or moved earlier) gets a new stamp instead, which makes its entry stale: it is dropped
 * when its bucket comes up, or by {@link SetLevels.compact} when stale entries outnumber live
 * ones. So filing and removing touch no other timer, and a bucket that comes up is read in
 * order: the wheel loads the slab entries a few ahead of the one it is firing, so their cache
 * misses overlap instead of following each other along a linked ring (a ring of a million
 * timers costs a dependent miss per timer). Against the ring of indices it replaced, 500k
 * periodic effects took 31% less time per expiry (medians of 7 alternating runs on a loaded
 * machine) for 15% more instructions (cachegrind, 1,298 against 1,125 per expiry at 100k keys).
 */
import * as slab from './timer-set-slab.js';
import { grown, StackSlab } from './timer-set-slab.js';

// Module-level copies of the slab's field offsets (see timer-set-wheel.ts for why).
const { STAMP, DUE } = slab;

/**
 * 256 buckets per level: a level-0 window of 256 ms and a level-1 window of 65 s, so the buffs
 * and cooldowns of a game (seconds to a minute) cascade once on their way down instead of twice
 * with 64 (each cascade reads the timer's slab entry: 64 slots cost the periodic-effects
 * benchmark ~20% more CPU per tick).
 */
const SLOT_BITS = 8;
const SLOTS = 1 << SLOT_BITS;
const SLOT_MASK = SLOTS - 1;
/** 256^7 = 2^56 ticks: enough levels for any tick a double holds exactly. */
const MAX_LEVELS = 7;
/** 32-bit words of occupancy bitmap per level. */
const LEVEL_WORDS = SLOTS >>> 5;
const MAX_INT32_TICK = 0x7fffffff;
/**
 * A bucket that never held anything: its count (element 0) is 0, and it gets an array of its own
 * on its first entry, so nothing is ever written here.
 */
const EMPTY = new Int32Array(1);

export abstract class SetLevels extends StackSlab {
  /** The tick the wheel has processed up to; buckets are relative to it. */
  protected currentTick = 0;
  /** Entries filed but stale (their timer's stamp moved on): dropped when met, or by `compact`. */
  stale = 0;
  /** The entries taken out of a bucket by {@link takeBucket}: `batch[i]` a slab index, `batch[i + 1]` its stamp. */
  protected batch: Int32Array = new Int32Array(64);
  protected batchLength = 0;
  /**
   * Bucket `level * 256 + slot`: its count of int32s in use at element 0, then its entries
   * (pairs, as in `batch`). The count lives in the bucket's own array, and the table covers only
   * the levels used so far (see {@link addLevels}): seven levels of tables took ~21 KB per
   * TimerSet, which a game with a set per entity pays on every one. The table grows by `push`,
   * never by assigning the field again: an assigned field loses V8's constant-field tracking, and
   * growing a table that way cost 31 instructions per TimerSet expiry (+0.7%, cachegrind, Node 20).
   */
  private readonly entries: Int32Array[] = [];
  /** Occupancy bits, one per bucket: level `L`'s at words `L * LEVEL_WORDS ...`. */
  private readonly occupied = new Int32Array(MAX_LEVELS * LEVEL_WORDS);
  private levels = 0;

  /** Appends stack `s`, with its current stamp, to the bucket its due tick belongs to; returns the tick it is filed for. */
  protected link(s: number): number {
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
    const bucket = (level << SLOT_BITS) | slot;
    let entries = this.entries[bucket];
    const n = entries[0];
    if (n + 1 === entries.length) entries = this.growBucket(bucket);
    entries[n + 1] = s;
    entries[n + 2] = this.w[(s << 3) | STAMP];
    entries[0] = n + 2;
    if (n === 0) this.occupied[level * LEVEL_WORDS + (slot >>> 5)] |= 1 << (slot & 31);
    return tick;
  }

  /** Makes stack `s`'s filed entry stale: the timer is out of the wheel from now on. */
  protected unlink(s: number): void {
    this.w[(s << 3) | STAMP]++;
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
    this.levels = levels;
  }

  /**
   * The bucket of the next event at or above `fromLevel` (`level * SLOTS + slot`: a small
   * integer, so returning it allocates nothing), or -1 when nothing is filed there.
   */
  protected nextEventBucket(fromLevel = 0): number {
    const current = this.currentTick;
    for (let level = fromLevel, span = SLOTS ** fromLevel; level < this.levels; level++, span *= SLOTS) {
      const slot = firstSetBit(this.occupied, level * LEVEL_WORDS, Math.floor(current / span) % SLOTS);
      if (slot >= 0) return level * SLOTS + slot;
    }
    return -1;
  }

  /** The tick a bucket from {@link nextEventBucket} comes up at, relative to the current tick. */
  protected bucketTick(bucket: number): number {
    const span = SLOTS ** (bucket >>> SLOT_BITS);
    const window = span * SLOTS;
    return Math.floor(this.currentTick / window) * window + (bucket & SLOT_MASK) * span;
  }

  /** True when a bucket from {@link nextEventBucket} is on level 0: its timers are due, not cascading. */
  protected static isDueBucket(bucket: number): boolean {
    return bucket < SLOTS;
  }

  /** Moves a bucket's entries from {@link nextEventBucket} into `batch`, so callbacks can refill its slot. */
  protected takeBucket(bucket: number): void {
    const entries = this.entries[bucket];
    const n = entries[0];
    // Copied, not swapped: each bucket keeps the array it grew to (swapping arrays of different
    // sizes made buckets grow again and again: +200 instructions per expiry of a periodic effect).
    if (n > this.batch.length) this.batch = new Int32Array(Math.max(n, this.batch.length * 2));
    // A loop, not `set(subarray())`: the view is an allocation per bucket, ~1,000 instructions
    // per expiry when a bucket holds one timer.
    const batch = this.batch;
    for (let i = 0; i < n; i++) batch[i] = entries[i + 1];
    this.batchLength = n;
    entries[0] = 0;
    const slot = bucket & SLOT_MASK;
    this.occupied[(bucket >>> SLOT_BITS) * LEVEL_WORDS + (slot >>> 5)] &= ~(1 << (slot & 31));
  }

  /** Empties every bucket: for a wheel whose entries are all stale (timer-set-wheel.ts's `disarm`). O(buckets). */
  protected sweep(): void {
    for (const entries of this.entries) entries[0] = 0;
    this.occupied.fill(0);
    this.stale = 0;
  }

  /** Drops every stale entry, keeping the others in order. O(entries); not while a batch is being read. */
  protected compact(): void {
    const w = this.w;
    for (let level = 0; level < this.levels; level++) {
      for (let slot = firstSetBit(this.occupied, level * LEVEL_WORDS, 0); slot >= 0;) {
        const bucket = (level << SLOT_BITS) | slot;
        const entries = this.entries[bucket];
        const kept = keepCurrent(entries, w);
        entries[0] = kept;
        if (kept === 0) this.occupied[level * LEVEL_WORDS + (slot >>> 5)] &= ~(1 << (slot & 31));
        slot = slot + 1 < SLOTS ? firstSetBit(this.occupied, level * LEVEL_WORDS, slot + 1) : -1;
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
