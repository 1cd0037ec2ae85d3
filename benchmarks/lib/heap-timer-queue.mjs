/**
 * A binary-heap timer queue: the other common way to hold many timers in one structure (Go's
 * runtime timers, libuv's own timer heap, Java's ScheduledThreadPoolExecutor). It is the fair
 * heap baseline for the core benchmarks, so it is a decent implementation, not a strawman:
 *
 * - an *indexed* min-heap: each entry knows its position, so cancel and refresh are O(log n)
 *   in place, with no lazy tombstones piling up (heap-js's `remove()` is an O(n) search, which
 *   would be unfair to the heap idea itself);
 * - ties broken by insertion order, so equal expiries fire first-in first-out;
 * - one native `setTimeout`, armed only when the root gets earlier (a later root just wakes
 *   early once and re-arms), so scheduling behind the root never touches the native timer;
 * - the same monotonic clock the wheel uses (`performance.now()`).
 */

/** One timer: the heap entry and the handle the caller holds. */
export class HeapTimer {
  constructor(queue, callback, expiresAt, delayMs, seq) {
    this.queue = queue;
    this.callback = callback;
    this.expiresAt = expiresAt;
    this.delayMs = delayMs;
    this.seq = seq;
    /** Position in the heap array; -1 when not pending. */
    this.index = -1;
  }

  cancel() {
    return this.queue.cancel(this);
  }

  refresh(delayMs = this.delayMs) {
    this.queue.refresh(this, delayMs);
    return this;
  }
}

function before(a, b) {
  return a.expiresAt < b.expiresAt || (a.expiresAt === b.expiresAt && a.seq < b.seq);
}

export class HeapTimerQueue {
  constructor() {
    this.heap = [];
    this.seq = 0;
    this.timer = undefined;
    this.armedAt = Infinity;
    this.wakeups = 0;
    this.onTimeout = () => this.wake();
  }

  get size() {
    return this.heap.length;
  }

  schedule(delayMs, callback) {
    const entry = new HeapTimer(this, callback, performance.now() + delayMs, delayMs, this.seq++);
    this.insert(entry);
    return entry;
  }

  cancel(entry) {
    if (entry.index < 0) return false;
    this.removeAt(entry.index);
    if (this.heap.length === 0) this.disarm();
    return true;
  }

  refresh(entry, delayMs) {
    entry.delayMs = delayMs;
    entry.expiresAt = performance.now() + delayMs;
    entry.seq = this.seq++;
    if (entry.index < 0) {
      this.insert(entry);
      return;
    }
    // A refresh only ever moves an expiry later or keeps it, except with a shorter delay.
    this.siftDown(entry.index);
    this.siftUp(entry.index);
    if (this.heap[0].expiresAt < this.armedAt) this.arm();
  }

  close() {
    for (const entry of this.heap) entry.index = -1;
    this.heap.length = 0;
    this.disarm();
  }

  insert(entry) {
    const heap = this.heap;
    entry.index = heap.length;
    heap.push(entry);
    this.siftUp(entry.index);
    if (entry.index === 0 && entry.expiresAt < this.armedAt) this.arm();
  }

  removeAt(index) {
    const heap = this.heap;
    const removed = heap[index];
    const last = heap.pop();
    removed.index = -1;
    if (last !== removed) {
      heap[index] = last;
      last.index = index;
      this.siftDown(index);
      this.siftUp(last.index);
    }
    return removed;
  }

  siftUp(index) {
    const heap = this.heap;
    const entry = heap[index];
    while (index > 0) {
      const parentIndex = (index - 1) >>> 1;
      const parent = heap[parentIndex];
      if (!before(entry, parent)) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = entry;
    entry.index = index;
  }

  siftDown(index) {
    const heap = this.heap;
    const length = heap.length;
    const entry = heap[index];
    for (;;) {
      let child = 2 * index + 1;
      if (child >= length) break;
      if (child + 1 < length && before(heap[child + 1], heap[child])) child++;
      if (!before(heap[child], entry)) break;
      heap[index] = heap[child];
      heap[index].index = index;
      index = child;
    }
    heap[index] = entry;
    entry.index = index;
  }

  arm() {
    this.disarm();
    const at = this.heap[0].expiresAt;
    this.armedAt = at;
    this.timer = setTimeout(this.onTimeout, Math.max(1, Math.ceil(at - performance.now())));
  }

  disarm() {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
  }

  wake() {
    this.timer = undefined;
    this.armedAt = Infinity;
    this.wakeups++;
    const heap = this.heap;
    const now = performance.now();
    while (heap.length > 0 && heap[0].expiresAt <= now) {
      const entry = this.removeAt(0);
      entry.callback(entry);
    }
    if (heap.length > 0) this.arm();
  }
}
