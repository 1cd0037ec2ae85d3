/**
 * The floor: what holding timers would cost if a timer were nothing but a node in one intrusive
 * doubly-linked list. Push at the tail and O(1) unlink, nothing else: no clock read, no expiry,
 * no validation, no counters, no driver. A node keeps its callback (any timer must) and its two
 * links.
 *
 * No timer can be cheaper than this per operation, so the core suite reports each wheel figure
 * also as a multiple of the floor's cost in the same run: a wheel at 2× the floor spends half
 * its time on timer semantics (where a timer goes, when it fires, the statistics) and half on
 * what any list costs (allocation, pointer writes, cache misses).
 */

/** One entry: the links and the callback. */
export class FloorNode {
  constructor(callback) {
    this.prev = null;
    this.next = null;
    this.callback = callback;
  }
}

/** A circular list with a sentinel, so push and unlink never test for an empty list. */
export class FloorList {
  constructor() {
    this.sentinel = new FloorNode(null);
    this.sentinel.prev = this.sentinel;
    this.sentinel.next = this.sentinel;
  }

  /** Appends a new node for `callback` and returns it. */
  push(callback) {
    const node = new FloorNode(callback);
    this.link(node);
    return node;
  }

  /** Links a detached node at the tail. */
  link(node) {
    const tail = this.sentinel.prev;
    node.prev = tail;
    node.next = this.sentinel;
    tail.next = node;
    this.sentinel.prev = node;
  }

  /** Unlinks a node in O(1). */
  unlink(node) {
    node.prev.next = node.next;
    node.next.prev = node.prev;
    node.prev = null;
    node.next = null;
  }

  /** Moves a node to the tail: what an idle timer's refresh is in a single-duration list. */
  moveToTail(node) {
    this.unlink(node);
    this.link(node);
  }

  /** Unlinks the head and calls its callback, for every node: "firing" with no notion of time. */
  drain() {
    const sentinel = this.sentinel;
    for (let node = sentinel.next; node !== sentinel; node = sentinel.next) {
      this.unlink(node);
      node.callback.call(undefined, node);
    }
  }
}
