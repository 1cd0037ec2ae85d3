/**
 * The level rings of a TimerSet's wheel: buckets of slab indices and their occupancy bitmaps.
 * Must not depend on: the clock, the wake-up driver or the keys (timer-set-wheel.ts runs passes over this).
 *
 * Where a timer goes and where the next one is: level `L` has 256 buckets of 256^L ticks each,
 * a timer sits at the level of the highest base-256 digit in which its due tick differs from the
 * current tick, and one bit per bucket says whether it holds anything, so the next event is a
 * find-first-set away. A bucket is a ring of slab indices whose sentinel is itself an index of the
 * slab (256 of them per level, taken when the level is first needed). See timer-set-wheel.ts for
 * the design of the wheel as a whole.
 */
import * as slab from './timer-set-slab.js';
import { StackSlab } from './timer-set-slab.js';

// Module-level copies of the slab's field offsets (see timer-set-wheel.ts for why).
const { NEXT, PREV, OWNER, DUE } = slab;

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
export const BATCH = 0;
/**
 * `owner` of the batch sentinel. A bucket's sentinel holds `-2 - (level * 64 + slot)`, so that an
 * emptied bucket finds its occupancy bit without a search; real timers hold their key slot, >= 0.
 */
const BATCH_OWNER = -1;
const MAX_INT32_TICK = 0x7fffffff;
export abstract class SetLevels extends StackSlab {
  /** The tick the wheel has processed up to; buckets are relative to it. */
  protected currentTick = 0;
  /** Slab index of slot 0's sentinel, per level; -1 until the level exists. */
  private readonly levelBase = new Int32Array(MAX_LEVELS).fill(-1);
  /** Occupancy bits, one per bucket: level `L`'s at words `L * LEVEL_WORDS ...`. */
  private readonly occupied = new Int32Array(MAX_LEVELS * LEVEL_WORDS);
  private levels = 0;

  constructor() {
    super();
    // Index 0, the slab's first, is the batch's sentinel.
    this.take();
    this.w[(BATCH << 3) | NEXT] = BATCH;
    this.w[(BATCH << 3) | PREV] = BATCH;
    this.w[(BATCH << 3) | OWNER] = BATCH_OWNER;
  }

  /** Links stack `s` into the bucket its due tick belongs to; returns the tick it is filed for. */
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
    const sentinel = this.levelBase[level] + slot;
    const w = this.w;
    const tail = w[(sentinel << 3) | PREV];
    w[(tail << 3) | NEXT] = s;
    w[(s << 3) | PREV] = tail;
    w[(s << 3) | NEXT] = sentinel;
    w[(sentinel << 3) | PREV] = s;
    if (tail === sentinel) this.occupied[level * LEVEL_WORDS + (slot >>> 5)] |= 1 << (slot & 31);
    return tick;
  }

  protected unlink(s: number): void {
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

  /** Moves a bucket from {@link nextEventBucket} into the batch ring, so callbacks can refill its slot. */
  protected takeBucket(bucket: number): void {
    const level = bucket >>> SLOT_BITS;
    const slot = bucket & SLOT_MASK;
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

  /**
   * Frees every stack still filed and empties every bucket: for a wheel whose filed stacks are all
   * discarded ones (timer-set-wheel.ts's `disarm`). O(filed + levels).
   */
  protected sweep(): void {
    const w = this.w;
    for (let level = 0; level < this.levels; level++) {
      for (let slot = firstSetBit(this.occupied, level * LEVEL_WORDS, 0); slot >= 0;) {
        const sentinel = this.levelBase[level] + slot;
        for (let s = w[(sentinel << 3) | NEXT]; s !== sentinel; s = w[(s << 3) | NEXT]) this.freeStack(s);
        w[(sentinel << 3) | NEXT] = sentinel;
        w[(sentinel << 3) | PREV] = sentinel;
        slot = slot + 1 < SLOTS ? firstSetBit(this.occupied, level * LEVEL_WORDS, slot + 1) : -1;
      }
      this.occupied.fill(0, level * LEVEL_WORDS, (level + 1) * LEVEL_WORDS);
    }
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
