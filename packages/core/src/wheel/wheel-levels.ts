/**
 * WheelLevels: the object a wheel holds its levels in (rings of buckets with occupancy bitmaps), and the pure slot arithmetic.
 *
 * The design is explained in `timing-wheel.ts` ("Ticks, levels and buckets"): a tick number read
 * in base `wheelSize` names a slot per level, and a timer goes to the level of the highest digit
 * in which its due tick differs from the current tick. The arithmetic is the pure functions
 * below ({@link levelOf}, {@link slotOf}, {@link firstSetBit}, ...), tested on their own; the
 * class keeps the buckets they index, like tokio's `Wheel { levels }`.
 */
import { Bucket, type Link } from './bucket.js';
import type { TimerHandle } from './timer-handle.js';
import type { PassLevels } from './wheel-pass.js';

/** Above this tick number bitwise arithmetic on ticks is unsafe, and filing takes the slow path. */
const MAX_INT32_TICK = 0x7fffffff;
// Declared locally and exported once: compiled to CommonJS, `export const` would make its use on
// the filing path a property read off the exports object.
export { MAX_INT32_TICK };

/** The slot of a parked timer: due beyond MAX_DELAY_MS, it is never filed and never fires. */
const PARKED_LEVEL = -2;
/** The slot of a batch taken out of the wheel to be fired or cascaded. */
const DETACHED_LEVEL = -1;

/**
 * The level of each highest differing bit of two tick numbers, for a wheel of `2^shift` slots:
 * bit `b` belongs to digit `floor(b / shift)`. A table, so that filing is one lookup.
 */
export function levelOfBitTable(shift: number): Uint8Array {
  const table = new Uint8Array(32);
  for (let bit = 0; bit < 32; bit++) table[bit] = Math.floor(bit / shift);
  return table;
}

/**
 * The level a timer due at `tick` is filed at when the wheel is at `current` (both at most
 * {@link MAX_INT32_TICK}, `tick >= current`): the highest base-`wheelSize` digit in which they
 * differ. `mask` is `wheelSize - 1`; `levelOfBit` is {@link levelOfBitTable}'s.
 */
export function levelOf(tick: number, current: number, mask: number, levelOfBit: Uint8Array): number {
  const diff = tick ^ current;
  return diff <= mask ? 0 : levelOfBit[31 - Math.clz32(diff)];
}

/** The slot of `tick` (at most {@link MAX_INT32_TICK}) at `level`: its digit there. */
export function slotOf(tick: number, level: number, shift: number, mask: number): number {
  return (tick >>> (level * shift)) & mask;
}

/**
 * {@link levelOf} and {@link slotOf} for tick numbers of any size, with division rather than bit
 * operations: exact for doubles, since every divisor is a power of two. Returns `[level, slot]`.
 */
export function levelAndSlotOfLargeTick(tick: number, current: number, wheelSize: number): [number, number] {
  let level = 0;
  let span = 1;
  let window = wheelSize;
  // Ends at the latest when `window` overflows to Infinity.
  while (Math.floor(tick / window) !== Math.floor(current / window)) {
    level++;
    span = window;
    window *= wheelSize;
  }
  return [level, Math.floor(tick / span) % wheelSize];
}

/**
 * The tick the slot `slot` of a level (buckets of `span` ticks, `window` ticks in all) begins at,
 * in the level's window that holds `current`. At the very top of the double range the window
 * overflows to Infinity; its base is then 0.
 */
export function startOfSlot(current: number, slot: number, span: number, window: number): number {
  const base = window === Infinity ? 0 : Math.floor(current / window) * window;
  return base + slot * span;
}

/**
 * Index of the first set bit at or after `from` in a bitmap of 32-bit words, or -1: the
 * occupancy search of both wheels (a set's wheel passes a view of one level's words).
 */
export function firstSetBit(words: Int32Array, from: number): number {
  let w = from >>> 5;
  let bits = words[w] & (-1 << (from & 31));
  for (;;) {
    if (bits !== 0) return (w << 5) + (31 - Math.clz32(bits & -bits));
    if (++w >= words.length) return -1;
    bits = words[w]!;
  }
}

/** One level: its buckets and an occupancy bitmap, one bit per slot. */
interface Level {
  /** Created on first use: a clock near Number.MAX_VALUE can need 64 levels of 65 536 slots. */
  readonly buckets: Array<Bucket | undefined>;
  readonly occupied: Int32Array;
  /** How many buckets of this level are non-empty; 0 lets the search skip the level. */
  occupiedCount: number;
  /** Ticks spanned by one bucket: wheelSize^level. */
  readonly span: number;
  /** Ticks spanned by the level: span * wheelSize (Infinity at the very top of the range). */
  readonly window: number;
}

/**
 * A wheel's levels: where each pending entry is linked, and where the next event is. The
 * storage `runPass` (`wheel-pass.ts`) walks for the core wheel.
 */
export class WheelLevels implements PassLevels<Bucket> {
  /** Every tick before this one has been processed; the wheel's passes move it. */
  currentTick = 0;
  /** Timers that never fire (due beyond MAX_DELAY_MS): kept linked only so that cancel is uniform. */
  readonly parked = new Bucket(PARKED_LEVEL, 0);

  private readonly shift: number;
  private readonly mask: number;
  private readonly levelOfBit: Uint8Array;
  private readonly levels: Level[] = [];

  constructor(readonly wheelSize: number) {
    this.shift = Math.log2(wheelSize);
    this.mask = wheelSize - 1;
    this.levelOfBit = levelOfBitTable(this.shift);
  }

  /** Levels in use. */
  get count(): number {
    return this.levels.length;
  }

  /**
   * Links an unlinked entry into the bucket of its due tick (overdue ones into the current
   * tick's) and returns that tick; Infinity for a parked entry.
   */
  link(handle: TimerHandle): number {
    const current = this.currentTick;
    let tick = handle._tick;
    if (tick === Infinity) {
      this.parked.append(handle);
      return tick;
    }
    if (tick < current) tick = current; // overdue: fire on the next pass
    let level: number;
    let slot: number;
    if (tick <= MAX_INT32_TICK) {
      level = levelOf(tick, current, this.mask, this.levelOfBit);
      slot = slotOf(tick, level, this.shift, this.mask);
    } else {
      [level, slot] = levelAndSlotOfLargeTick(tick, current, this.wheelSize);
    }
    const lv = level < this.levels.length ? this.levels[level] : this.addLevels(level);
    const bucket = lv.buckets[slot] ?? (lv.buckets[slot] = new Bucket(level, slot));
    if (bucket.append(handle)) {
      lv.occupied[slot >>> 5] |= 1 << (slot & 31);
      lv.occupiedCount++;
    }
    return tick;
  }

  /**
   * Unlinks a pending entry and leaves `mark` in its `_next`: the state it leaves pending for
   * (see timer-handle.ts), or null when it is linked again at once. Returns true when that
   * emptied its bucket.
   */
  unlink(handle: TimerHandle, mark: Link | null): boolean {
    const prev = handle._prev!;
    const next = handle._next!;
    prev._next = next;
    next._prev = prev;
    handle._prev = null;
    handle._next = mark;
    // Neighbours that are one node: only the sentinel is left, the bucket just became empty.
    if (prev !== next) return false;
    this.bucketEmptied(prev as Bucket);
    return true;
  }

  /**
   * The bucket of the next event (a level-0 bucket to fire or a coarser bucket to cascade) at
   * `fromLevel` or above, or undefined when there is none. Its `level` and `slot` say which; its
   * event happens at {@link WheelLevels.startOf}.
   */
  nextEventBucket(fromLevel = 0): Bucket | undefined {
    const current = this.currentTick;
    for (let l = fromLevel; l < this.levels.length; l++) {
      const level = this.levels[l];
      if (level.occupiedCount === 0) continue;
      const slot = firstSetBit(level.occupied, Math.floor(current / level.span) % this.wheelSize);
      if (slot >= 0) return level.buckets[slot]; // occupied, so created
    }
    return undefined;
  }

  /** The tick a filed bucket's slot begins at, in the current window of its level. */
  startOf(bucket: Bucket): number {
    const level = this.levels[bucket.level];
    return startOfSlot(this.currentTick, bucket.slot, level.span, level.window);
  }

  /** True for a level-0 bucket (it fires); a coarser one cascades. */
  isFine(bucket: Bucket): boolean {
    return bucket.level === 0;
  }

  /**
   * The start of the next occupied bucket after `bucket` at its level, or of the next event
   * above it; -1 when neither exists. Lazily refreshed entries can make a coarse bucket's
   * earliest timer later than that, and the driver must never sleep past it.
   */
  nextEventAfter(bucket: Bucket): number {
    const level = this.levels[bucket.level];
    const nextSlot = bucket.slot + 1 < this.wheelSize ? firstSetBit(level.occupied, bucket.slot + 1) : -1;
    const sameLevel = nextSlot >= 0 ? this.startOf(level.buckets[nextSlot]!) : -1;
    const above = this.nextEventBucket(bucket.level + 1);
    const coarser = above === undefined ? -1 : this.startOf(above);
    if (sameLevel < 0) return coarser;
    return coarser < 0 || sameLevel < coarser ? sameLevel : coarser;
  }

  /** Empties a filed bucket into a detached batch, so callbacks can refill the slot. */
  take(bucket: Bucket): Bucket {
    const level = this.levels[bucket.level];
    const batch = new Bucket(DETACHED_LEVEL, 0);
    bucket.moveAllTo(batch);
    level.occupied[bucket.slot >>> 5] &= ~(1 << (bucket.slot & 31));
    level.occupiedCount--;
    return batch;
  }

  /** Calls `visit` on every filed and parked entry (it may unlink the one it is given). */
  forEachEntry(visit: (handle: TimerHandle) => void): void {
    for (const level of this.levels) {
      if (level.occupiedCount === 0) continue;
      for (const bucket of level.buckets) if (bucket !== undefined) drain(bucket, visit);
    }
    drain(this.parked, visit);
  }

  private bucketEmptied(bucket: Bucket): void {
    if (bucket.level < 0) return; // parked, or a detached batch: no bitmap bit
    const level = this.levels[bucket.level];
    level.occupied[bucket.slot >>> 5] &= ~(1 << (bucket.slot & 31));
    level.occupiedCount--;
  }

  private addLevels(upTo: number): Level {
    while (this.levels.length <= upTo) {
      const index = this.levels.length;
      // Filled with undefined rather than holey, so that reads stay on the fast packed path.
      const buckets = new Array<Bucket | undefined>(this.wheelSize).fill(undefined);
      const span = this.wheelSize ** index;
      this.levels.push({
        buckets,
        occupied: new Int32Array(Math.ceil(this.wheelSize / 32)),
        occupiedCount: 0,
        span,
        window: span * this.wheelSize,
      });
    }
    return this.levels[upTo];
  }
}

function drain(bucket: Bucket, visit: (handle: TimerHandle) => void): void {
  for (let link: Link = bucket._next; link !== bucket;) {
    const next: Link = link._next!;
    visit(link as TimerHandle);
    link = next;
  }
}
