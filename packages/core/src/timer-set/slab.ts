/**
 * StackSlab: a TimerSet's timers as indices into one typed buffer, with its free list.
 *
 * # The slab: a TimerSet's timers as indices into one typed array
 *
 * A game server's {@link TimerSet} holds hundreds of thousands of timers, most of them re-armed
 * from their own expiry (a buff applied again, a damage tick). Held as one `TimerHandle` object
 * per timer, plus a stack object and a closure to find its key, such a set costs several times
 * the memory per buff and a cache miss per object on every cascade and expiry. So every timer of a set (every stack of a key) is an index `s` into one buffer
 * instead, 32 bytes per timer:
 *
 * | field (`w[8s + ...]`) | what it holds                                                        |
 * |-----------------------|----------------------------------------------------------------------|
 * | `STAMP`               | bumped whenever it leaves the wheel: its bucket entry must match it (`set-wheel.ts`) |
 * | `OWNER`               | the key slot it belongs to                                           |
 * | `NEWER`, `OLDER`      | the next newer and older stack of the same key, or -1 (`key-table.ts`) |
 * | `DUE` (`t[4s + 3]`)   | its due tick while it runs; its remaining ms while its key is paused |
 *
 * `w` (Int32) and `t` (Float64) view the same buffer, so a timer's fields share one cache line
 * (word 1 is unused: 32 bytes keep a timer inside one line):
 * a cascade or an expiry that touches a timer at a random place in a million costs one miss, not
 * one per field as separate arrays would. Nothing in it is traced by the garbage collector.
 *
 * A freed index goes on a free list and the next timer takes the most recently freed one, so a
 * buff re-applied from `onExpire` re-arms the very index that just fired, still in cache. The
 * buffer doubles when full and never shrinks (a set that once held a million timers keeps room
 * for them).
 */

/** Never reset, not even when the index is freed and taken again, so an old entry never matches. */
export const STAMP = 0;
export const OWNER = 2;
export const NEWER = 3;
export const OLDER = 4;
/** Index of the due time in `t`, per timer (its bytes are words 6 and 7 of the timer in `w`). */
export const DUE = 3;
/** Int32 words per timer. */
const WORDS = 8;
/** Small, for the game whose every entity has a set of its own; the buffer doubles as it fills. */
const INITIAL_CAPACITY = 8;

/** The typed arrays of a set's timers and their free list; the wheel and the key table both hold it. */
export class StackSlab {
  /** The timers' integer fields: timer `s` at `w[(s << 3) | FIELD]`. */
  w: Int32Array;
  /** The same buffer as doubles: timer `s`'s due time at `t[(s << 2) | DUE]`. */
  t: Float64Array;
  private freeList = new Int32Array(INITIAL_CAPACITY);
  private freeCount = 0;
  /** Indices below this have been handed out at least once. */
  private top = 0;

  constructor() {
    const buffer = new ArrayBuffer(INITIAL_CAPACITY * WORDS * 4);
    this.w = new Int32Array(buffer);
    this.t = new Float64Array(buffer);
  }

  /** A fresh index for a timer of key slot `owner`, not yet filed. */
  alloc(owner: number): number {
    const s = this.freeCount > 0 ? this.freeList[--this.freeCount] : this.take();
    this.w[(s << 3) | OWNER] = owner;
    return s;
  }

  /** Gives an index that is not filed back for reuse. */
  free(s: number): void {
    this.freeList[this.freeCount++] = s;
  }

  /** An index never used before, growing the buffer when it is full. */
  private take(): number {
    if (this.top === this.freeList.length) this.grow();
    return this.top++;
  }

  private grow(): void {
    const capacity = this.freeList.length * 2;
    const buffer = new ArrayBuffer(capacity * WORDS * 4);
    this.w = grown(this.w, new Int32Array(buffer));
    this.t = new Float64Array(buffer);
    this.freeList = grown(this.freeList, new Int32Array(capacity));
  }
}

/** Copies `from` into the start of the larger `to` and returns `to`. */
export function grown<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
