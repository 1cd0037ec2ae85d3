/**
 * # The slab: a TimerSet's timers as indices into typed arrays
 *
 * A game server's {@link TimerSet} holds hundreds of thousands of timers, most of them re-armed
 * from their own expiry (a buff applied again, a damage tick). Held as one `TimerHandle` object
 * per timer, plus a stack object and a closure to find its key, such a set cost 429 bytes per buff
 * (benchmarks/results/game.json before the slab) and a cache miss per object on every cascade
 * and expiry. So every timer of a set (every stack of a key) is an index `s` into a few typed
 * arrays instead:
 *
 * | array            | per timer `s`                                                        |
 * |------------------|----------------------------------------------------------------------|
 * | `next`, `prev`   | its neighbours in the bucket ring it is filed in (`timer-set-wheel.ts`) |
 * | `owner`          | the key slot it belongs to (>= 0); a sentinel holds a negative code  |
 * | `due`            | its due tick while it runs; its remaining ms while its key is paused |
 * | `newer`, `older` | the next newer and older stack of the same key, or -1 (`timer-set-store.ts`) |
 *
 * That is 28 bytes per timer and nothing for the garbage collector to trace. A freed index goes
 * on a free list and the next timer takes the most recently freed one, so a buff re-applied from
 * `onExpire` re-arms the very index that just fired, still in cache. The arrays double when
 * full and never shrink (a set that once held a million timers keeps room for them).
 */

const INITIAL_CAPACITY = 256;

export abstract class StackSlab {
  next = new Int32Array(INITIAL_CAPACITY);
  prev = new Int32Array(INITIAL_CAPACITY);
  owner = new Int32Array(INITIAL_CAPACITY);
  due = new Float64Array(INITIAL_CAPACITY);
  newer = new Int32Array(INITIAL_CAPACITY);
  older = new Int32Array(INITIAL_CAPACITY);
  private free = new Int32Array(INITIAL_CAPACITY);
  private freeCount = 0;
  /** Indices below this have been handed out at least once. */
  private top = 0;

  /** A fresh index for a timer of key slot `owner`, not yet filed. */
  protected allocStack(owner: number): number {
    const s = this.freeCount > 0 ? this.free[--this.freeCount]! : this.take();
    this.owner[s] = owner;
    return s;
  }

  /** Gives an index that is not filed back for reuse. */
  protected freeStack(s: number): void {
    this.free[this.freeCount++] = s;
  }

  /** An index never used before, growing the arrays when they are full. */
  protected take(): number {
    if (this.top === this.next.length) this.grow();
    return this.top++;
  }

  private grow(): void {
    const capacity = this.next.length * 2;
    this.next = grown(this.next, new Int32Array(capacity));
    this.prev = grown(this.prev, new Int32Array(capacity));
    this.owner = grown(this.owner, new Int32Array(capacity));
    this.due = grown(this.due, new Float64Array(capacity));
    this.newer = grown(this.newer, new Int32Array(capacity));
    this.older = grown(this.older, new Int32Array(capacity));
    this.free = grown(this.free, new Int32Array(capacity));
  }
}

/** Copies `from` into the start of the larger `to` and returns `to`. */
export function grown<T extends Int32Array | Uint8Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
