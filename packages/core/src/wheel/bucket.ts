/**
 * Bucket: one slot of one wheel level, a circular doubly-linked list of timer entries.
 * Must not depend on: the clock, the driver, node:timers or any adapter (it only links and unlinks entries).
 *
 * A bucket is one slot of one level of the wheel: a circular doubly-linked list of timer entries
 * with the bucket itself as the sentinel. Because the sentinel closes the ring, an entry can be
 * unlinked in O(1) without knowing which bucket holds it, and an entry whose neighbours are one
 * and the same node has just emptied its bucket.
 */

/** Anything that can sit in a bucket's ring: the bucket (sentinel) or a timer entry. */
export interface Link {
  _prev: Link | null;
  _next: Link | null;
}

export class Bucket implements Link {
  _prev: Link;
  _next: Link;

  /**
   * @param level - the wheel level this bucket belongs to, or -1 for a detached batch being fired
   * @param slot - its index within the level
   */
  constructor(
    readonly level: number,
    readonly slot: number,
  ) {
    this._prev = this;
    this._next = this;
  }

  get isEmpty(): boolean {
    return this._next === this;
  }

  /** Appends `entry` (which must be unlinked) at the tail; returns true if the bucket was empty. */
  append(entry: Link): boolean {
    const tail = this._prev;
    const wasEmpty = tail === this;
    entry._prev = tail;
    entry._next = this;
    tail._next = entry;
    this._prev = entry;
    return wasEmpty;
  }

  /** Moves every entry of this bucket to the (empty) bucket `into`, in O(1). */
  moveAllTo(into: Bucket): void {
    if (this._next === this) return;
    into._next = this._next;
    into._prev = this._prev;
    into._next._prev = into;
    into._prev._next = into;
    this._next = this;
    this._prev = this;
  }
}
