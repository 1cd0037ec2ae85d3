/**
 * The keys of a {@link TimerSet} and their stacks, over the slab wheel (`timer-set-wheel.ts`).
 *
 * A key lives in a key slot: its key and value in two plain arrays, its oldest and newest stack,
 * its stack count and its paused flag in typed arrays; a `Map` finds the slot of a key. Its
 * stacks are slab indices (`timer-set-slab.ts`) chained oldest first through `older`/`newer`. A key with one stack,
 * the common case, is a Map entry, two array cells, a few typed-array cells and one slab index:
 * no object of its own. Freed slots and indices are reused, newest first.
 *
 * A paused key's stacks are out of the wheel and hold their remaining ms in `due` instead of a
 * due tick; `paused` says which reading applies.
 *
 * ## The expiring key
 * When a key's last stack fires, the key is gone *before* `onExpire` runs (`has(key)` is false),
 * but its slot stays in the Map with no stacks while the callback runs (`expiring`). A periodic
 * effect sets its key again from `onExpire`: that finds the slot without a Map lookup and
 * revives it, and the stack index the callback reuses is the one that just fired. So a periodic
 * effect costs no Map delete and insert and no allocation per expiry. Callbacks never nest
 * within one set, so there is at most one expiring key.
 */
import type { Clock, WakeupDriver } from './clock.js';
import { EXTEND, IGNORE, MAX, REPLACE, STACK, expireInfo, type ExpireCallback } from './timer-set-options.js';
import { grown } from './timer-set-slab.js';
import { SetWheel } from './timer-set-wheel.js';

const NONE = -1;

export class KeyedStacks<K, V> extends SetWheel {
  /** Key slot of every key held, including the expiring one. */
  readonly slots = new Map<K, number>();
  keys: (K | undefined)[] = [];
  values: (V | undefined)[] = [];
  oldest = new Int32Array(64);
  newest = new Int32Array(64);
  count = new Int32Array(64);
  paused = new Uint8Array(64);
  /** The key slot whose last stack is expiring while its `onExpire` runs, or NONE. */
  expiring = NONE;
  private freeKeys: number[] = [];

  constructor(
    clock: Clock,
    createDriver: (wake: () => void) => WakeupDriver,
    private readonly onExpire: ExpireCallback<K, V>,
  ) {
    super(clock, createDriver);
  }

  /** The key's slot while it holds at least one stack, else NONE. */
  live(key: K): number {
    const k = this.slots.get(key);
    return k === undefined || this.count[k] === 0 ? NONE : k;
  }

  /** Keys held, not counting the expiring one. */
  get size(): number {
    return this.expiring !== NONE && this.count[this.expiring] === 0 ? this.slots.size - 1 : this.slots.size;
  }

  /** `set()` after its arguments were checked; `policy` is a code from timer-set-options.ts. */
  set(key: K, ms: number, value: V, policy: number, maxStacks: number): void {
    // A key set again from its own onExpire (a periodic effect) needs no Map lookup.
    const expiring = this.expiring;
    let k = expiring !== NONE && this.keys[expiring] === key ? expiring : this.slots.get(key);
    if (k === undefined) {
      k = this.newKey(key, value);
      this.slots.set(key, k);
      this.addStack(k, ms);
      return;
    }
    if (this.count[k] === 0) {
      // The key is expiring right now (we are inside its onExpire): set it afresh.
      this.values[k] = value;
      this.paused[k] = 0;
      this.addStack(k, ms);
      return;
    }
    switch (policy) {
      case IGNORE:
        return;
      case REPLACE:
        while (this.count[k]! > 1) this.dropStack(k, this.newest[k]!);
        this.setRemaining(k, this.oldest[k]!, ms);
        break;
      case MAX:
        for (let s = this.oldest[k]!; s !== NONE; s = this.newer[s]!) {
          if (ms > this.remainingOfStack(k, s)) this.setRemaining(k, s, ms);
        }
        break;
      case EXTEND:
        for (let s = this.oldest[k]!; s !== NONE; s = this.newer[s]!) this.setRemaining(k, s, this.remainingOfStack(k, s) + ms);
        break;
      case STACK:
        this.addStack(k, ms);
        while (this.count[k]! > maxStacks) this.dropStack(k, this.oldest[k]!);
        break;
    }
    this.values[k] = value;
  }

  /** Game-time ms until the stack fires (or its frozen remaining time while its key is paused). */
  remainingOfStack(k: number, s: number): number {
    return this.paused[k] === 1 ? this.due[s]! : this.remainingOf(s);
  }

  /** Pauses a running key: each stack leaves the wheel and keeps its remaining time. */
  pauseKey(k: number): void {
    for (let s = this.oldest[k]!; s !== NONE; s = this.newer[s]!) {
      const left = this.remainingOf(s);
      this.unschedule(s);
      this.due[s] = left;
    }
    this.paused[k] = 1;
  }

  /** Resumes a paused key: each stack goes back into the wheel with its remaining time. */
  resumeKey(k: number): void {
    this.paused[k] = 0;
    for (let s = this.oldest[k]!; s !== NONE; s = this.newer[s]!) this.schedule(s, this.due[s]!);
  }

  /** Removes a key that has left (or is leaving) the Map: its stacks without reporting them, then its slot. */
  releaseKey(k: number): void {
    const running = this.paused[k] === 0;
    for (let s = this.oldest[k]!; s !== NONE; ) {
      const next = this.newer[s]!;
      if (running) this.unschedule(s);
      this.freeStack(s);
      s = next;
    }
    this.oldest[k] = NONE;
    this.newest[k] = NONE;
    this.count[k] = 0;
    this.paused[k] = 0;
    // Deleted (or cleared) from its own onExpire: fire() must not remove it a second time.
    if (this.expiring === k) this.expiring = NONE;
    // A free slot must not keep the caller's key and value alive.
    this.keys[k] = undefined;
    this.values[k] = undefined;
    this.freeKeys.push(k);
  }

  /** A key slot for a new key, with no stacks. */
  newKey(key: K, value: V): number {
    let k = this.freeKeys.pop();
    if (k === undefined) {
      k = this.keys.length;
      this.keys.push(key);
      this.values.push(value);
      if (k === this.count.length) this.growKeys(k * 2);
    } else {
      this.keys[k] = key;
      this.values[k] = value;
    }
    this.oldest[k] = NONE;
    this.newest[k] = NONE;
    this.count[k] = 0;
    this.paused[k] = 0;
    return k;
  }

  /** Links a new newest stack with `ms` to go; it runs unless its key is paused. */
  addStack(k: number, ms: number): void {
    const s = this.allocStack(k);
    const tail = this.newest[k]!;
    this.older[s] = tail;
    this.newer[s] = NONE;
    if (tail === NONE) this.oldest[k] = s;
    else this.newer[tail] = s;
    this.newest[k] = s;
    this.count[k]++;
    if (this.paused[k] === 1) this.due[s] = ms;
    else this.schedule(s, ms);
  }

  private setRemaining(k: number, s: number, ms: number): void {
    if (this.paused[k] === 1) this.due[s] = ms;
    else this.reschedule(s, ms);
  }

  private unlinkStack(k: number, s: number): void {
    const older = this.older[s]!;
    const newer = this.newer[s]!;
    if (older === NONE) this.oldest[k] = newer;
    else this.newer[older] = newer;
    if (newer === NONE) this.newest[k] = older;
    else this.older[newer] = older;
    this.count[k]--;
  }

  /** Removes a stack without reporting it (a dropped oldest stack, or one collapsed by `'replace'`). */
  private dropStack(k: number, s: number): void {
    this.unlinkStack(k, s);
    if (this.paused[k] === 0) this.unschedule(s);
    this.freeStack(s);
  }

  /**
   * A stack came due: unlink it, free its index, then tell the owner. When it was the last stack
   * the key counts as gone during the callback (see `expiring`) and leaves the Map afterwards
   * unless the callback set it again.
   */
  protected fire(s: number): void {
    const k = this.owner[s]!;
    this.unlinkStack(k, s);
    this.freeStack(s);
    const key = this.keys[k] as K;
    const value = this.values[k] as V;
    const stacksLeft = this.count[k]!;
    if (stacksLeft > 0) {
      this.onExpire.call(undefined, key, value, expireInfo(stacksLeft));
      return;
    }
    this.expiring = k;
    try {
      this.onExpire.call(undefined, key, value, expireInfo(0));
    } finally {
      // Unless delete(), clear() or close() from the callback has already let go of the slot.
      if (this.expiring === k) {
        this.expiring = NONE;
        if (this.count[k] === 0) {
          this.slots.delete(key);
          this.releaseKey(k);
        }
      }
    }
  }

  /** Releases the set's wake-up for good (after every key was released). */
  close(): void {
    this.closeWheel();
  }

  private growKeys(capacity: number): void {
    this.oldest = grown(this.oldest, new Int32Array(capacity));
    this.newest = grown(this.newest, new Int32Array(capacity));
    this.count = grown(this.count, new Int32Array(capacity));
    this.paused = grown(this.paused, new Uint8Array(capacity));
  }
}
