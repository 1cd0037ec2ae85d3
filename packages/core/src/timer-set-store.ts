/**
 * The keys of a {@link TimerSet} and their stacks, over the slab wheel (`timer-set-wheel.ts`).
 * Must not depend on: node:timers or the public TimerSet API (it is the set's engine, not its client).
 *
 * A key lives in a key slot `k`: its key and value side by side in one plain array (`kv`), its
 * oldest and newest stack, its stack count and its paused flag side by side in one Int32Array
 * (`kw`), so that each is one cache line; a `Map` finds the slot of a key. Its stacks are slab
 * indices (`timer-set-slab.ts`) chained oldest first through `OLDER`/`NEWER`. A key with one
 * stack, the common case, is a Map entry, 16 bytes of `kv`, 16 of `kw` and 32 of slab: no
 * object of its own. Freed slots and indices are reused, newest first.
 *
 * A paused key's stacks are out of the wheel and hold their remaining ms in `DUE` instead of a
 * due tick; `PAUSED` says which reading applies.
 *
 * ## The expiring key
 * When a key's last stack fires, the key is gone *before* `onExpire` runs (`has(key)` is false),
 * but its slot stays in the Map with no stacks while the callback runs (`expiring`). A periodic
 * effect sets its key again from `onExpire`: that finds the slot without a Map lookup and
 * revives it, and the stack index the callback reuses is the one that just fired. So a periodic
 * effect costs no Map delete and insert and no allocation per expiry. Callbacks never nest
 * within one set, so there is at most one expiring key.
 */
import { publishTimerSetExpire, timerSetExpireChannel } from './channels.js';
import type { Clock, WakeupDriver } from './clock.js';
import { EXTEND, IGNORE, MAX, REPLACE, STACK, expireInfo, type ExpireCallback } from './timer-set-options.js';
import type { TimerSet } from './timer-set.js';
import { DUE, NEWER, NEXT, OLDER, OWNER, grown } from './timer-set-slab.js';
import { SetWheel } from './timer-set-wheel.js';

const NONE = -1;
/** Offsets of a key slot's fields in `kw`. */
const OLDEST = 0;
const NEWEST = 1;
const COUNT = 2;
const PAUSED = 3;
const KEY_WORDS = 4;

export class KeyedStacks<K, V> extends SetWheel {
  /** Key slot of every key held, including the expiring one. */
  readonly slots = new Map<K, number>();
  /** Per key slot `k`: its key at `2k`, its value at `2k + 1` (one cache line for both). */
  kv: unknown[] = [];
  /** Per key slot `k`, at `4k +` OLDEST, NEWEST, COUNT, PAUSED: its oldest and newest stack, its stack count, 1 when paused. */
  kw = new Int32Array(64 * KEY_WORDS);
  /** The key slot whose last stack is expiring while its `onExpire` runs, or NONE. */
  expiring = NONE;
  /**
   * True while the expiring key has no stacks, known without reading its record: `fire()` only
   * wrote it, and a load right after those stores would wait for the cache line they are still
   * fetching. The callback's `set()` of the same key revives it with stores alone.
   */
  private expiringEmpty = false;
  /** Written only so that `fire()`'s look-ahead loads are not optimised away (never read). */
  lookahead: unknown = undefined;
  /** The TimerSet this store belongs to, named in the `tickwheel:core:timer-set-expire` message. */
  owner: TimerSet<unknown, unknown> | undefined = undefined;
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
    return k === undefined || this.kw[(k << 2) | COUNT] === 0 ? NONE : k;
  }

  valueAt(k: number): V {
    return this.kv[(k << 1) | 1] as V;
  }

  stackCount(k: number): number {
    return this.kw[(k << 2) | COUNT];
  }

  isPaused(k: number): boolean {
    return this.kw[(k << 2) | PAUSED] === 1;
  }

  /** Marks a new key (no stacks yet) as paused, for `restore()`: its stacks keep their time. */
  markPaused(k: number): void {
    this.kw[(k << 2) | PAUSED] = 1;
  }

  oldestOf(k: number): number {
    return this.kw[(k << 2) | OLDEST];
  }

  newerOf(s: number): number {
    return this.w[(s << 3) | NEWER];
  }

  /** Keys held, not counting the expiring one. */
  get size(): number {
    return this.expiring !== NONE && this.kw[(this.expiring << 2) | COUNT] === 0
      ? this.slots.size - 1
      : this.slots.size;
  }

  /** `set()` after its arguments were checked; `policy` is a code from timer-set-options.ts. */
  set(key: K, ms: number, value: V, policy: number, maxStacks: number): void {
    // A key set again from its own onExpire (a periodic effect) needs no Map lookup.
    const expiring = this.expiring;
    let k = expiring !== NONE && this.kv[expiring << 1] === key ? expiring : this.slots.get(key);
    if (k === undefined) {
      k = this.newKey(key, value);
      this.slots.set(key, k);
      this.addStack(k, ms);
      return;
    }
    if (k === expiring && this.expiringEmpty) {
      // A periodic effect: the key is expiring right now and set again from its onExpire.
      this.expiringEmpty = false;
      this.kv[(k << 1) | 1] = value;
      this.reviveStack(k, ms);
      return;
    }
    if (this.kw[(k << 2) | COUNT] === 0) {
      // The key is expiring right now (we are inside its onExpire): set it afresh.
      this.expiringEmpty = false;
      this.kv[(k << 1) | 1] = value;
      this.kw[(k << 2) | PAUSED] = 0;
      this.addStack(k, ms);
      return;
    }
    switch (policy) {
      case IGNORE:
        return;
      case REPLACE:
        while (this.kw[(k << 2) | COUNT] > 1) this.dropStack(k, this.kw[(k << 2) | NEWEST]);
        this.setRemaining(k, this.kw[(k << 2) | OLDEST], ms);
        break;
      case MAX:
        for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE; s = this.w[(s << 3) | NEWER]!) {
          if (ms > this.remainingOfStack(k, s)) this.setRemaining(k, s, ms);
        }
        break;
      case EXTEND:
        for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE; s = this.w[(s << 3) | NEWER]!)
          this.setRemaining(k, s, this.remainingOfStack(k, s) + ms);
        break;
      case STACK:
        this.addStack(k, ms);
        while (this.kw[(k << 2) | COUNT] > maxStacks) this.dropStack(k, this.kw[(k << 2) | OLDEST]);
        break;
    }
    this.kv[(k << 1) | 1] = value;
  }

  /** Game-time ms until the stack fires (or its frozen remaining time while its key is paused). */
  remainingOfStack(k: number, s: number): number {
    return this.kw[(k << 2) | PAUSED] === 1 ? this.t[(s << 2) | DUE] : this.remainingOf(s);
  }

  /** Pauses a running key: each stack leaves the wheel and keeps its remaining time. */
  pauseKey(k: number): void {
    for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE; s = this.w[(s << 3) | NEWER]!) {
      const left = this.remainingOf(s);
      this.unschedule(s);
      this.t[(s << 2) | DUE] = left;
    }
    this.kw[(k << 2) | PAUSED] = 1;
  }

  /** Resumes a paused key: each stack goes back into the wheel with its remaining time. */
  resumeKey(k: number): void {
    this.kw[(k << 2) | PAUSED] = 0;
    for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE; s = this.w[(s << 3) | NEWER]!)
      this.schedule(s, this.t[(s << 2) | DUE]);
  }

  /** Removes a key that has left (or is leaving) the Map: its stacks without reporting them, then its slot. */
  releaseKey(k: number): void {
    const running = this.kw[(k << 2) | PAUSED] === 0;
    for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE;) {
      const next = this.w[(s << 3) | NEWER];
      if (running) this.unschedule(s);
      this.freeStack(s);
      s = next;
    }
    this.kw[(k << 2) | OLDEST] = NONE;
    this.kw[(k << 2) | NEWEST] = NONE;
    this.kw[(k << 2) | COUNT] = 0;
    this.kw[(k << 2) | PAUSED] = 0;
    // Deleted (or cleared) from its own onExpire: fire() must not remove it a second time.
    if (this.expiring === k) {
      this.expiring = NONE;
      this.expiringEmpty = false;
    }
    // A free slot must not keep the caller's key and value alive.
    this.kv[k << 1] = undefined;
    this.kv[(k << 1) | 1] = undefined;
    this.freeKeys.push(k);
  }

  /** A key slot for a new key, with no stacks. */
  newKey(key: K, value: V): number {
    let k = this.freeKeys.pop();
    if (k === undefined) {
      k = this.kv.length >> 1;
      this.kv.push(key, value);
      if (k * KEY_WORDS === this.kw.length) this.kw = grown(this.kw, new Int32Array(this.kw.length * 2));
    } else {
      this.kv[k << 1] = key;
      this.kv[(k << 1) | 1] = value;
    }
    this.kw[(k << 2) | OLDEST] = NONE;
    this.kw[(k << 2) | NEWEST] = NONE;
    this.kw[(k << 2) | COUNT] = 0;
    this.kw[(k << 2) | PAUSED] = 0;
    return k;
  }

  /** Links a new newest stack with `ms` to go; it runs unless its key is paused. */
  addStack(k: number, ms: number): void {
    const s = this.allocStack(k);
    const tail = this.kw[(k << 2) | NEWEST];
    this.w[(s << 3) | OLDER] = tail;
    this.w[(s << 3) | NEWER] = NONE;
    if (tail === NONE) this.kw[(k << 2) | OLDEST] = s;
    else this.w[(tail << 3) | NEWER] = s;
    this.kw[(k << 2) | NEWEST] = s;
    this.kw[(k << 2) | COUNT]++;
    if (this.kw[(k << 2) | PAUSED] === 1) this.t[(s << 2) | DUE] = ms;
    else this.schedule(s, ms);
  }

  /** `addStack` for the expiring key with no stacks, written without reading its record. */
  private reviveStack(k: number, ms: number): void {
    const s = this.allocStack(k);
    this.w[(s << 3) | OLDER] = NONE;
    this.w[(s << 3) | NEWER] = NONE;
    const kw = this.kw;
    kw[(k << 2) | OLDEST] = s;
    kw[(k << 2) | NEWEST] = s;
    kw[(k << 2) | COUNT] = 1;
    kw[(k << 2) | PAUSED] = 0;
    this.schedule(s, ms);
  }

  private setRemaining(k: number, s: number, ms: number): void {
    if (this.kw[(k << 2) | PAUSED] === 1) this.t[(s << 2) | DUE] = ms;
    else this.reschedule(s, ms);
  }

  private unlinkStack(k: number, s: number): void {
    const older = this.w[(s << 3) | OLDER];
    const newer = this.w[(s << 3) | NEWER];
    if (older === NONE) this.kw[(k << 2) | OLDEST] = newer;
    else this.w[(older << 3) | NEWER] = newer;
    if (newer === NONE) this.kw[(k << 2) | NEWEST] = older;
    else this.w[(newer << 3) | OLDER] = older;
    this.kw[(k << 2) | COUNT]--;
  }

  /** Removes a stack without reporting it (a dropped oldest stack, or one collapsed by `'replace'`). */
  private dropStack(k: number, s: number): void {
    this.unlinkStack(k, s);
    if (this.kw[(k << 2) | PAUSED] === 0) this.unschedule(s);
    this.freeStack(s);
  }

  /**
   * A stack came due: unlink it, free its index, then tell the owner. When it was the last stack
   * the key counts as gone during the callback (see `expiring`) and leaves the Map afterwards
   * unless the callback set it again.
   */
  protected fire(s: number): void {
    const w = this.w;
    const k = w[(s << 3) | OWNER];
    // The stack fired next (still linked after this one) and its key's cells: loading them now
    // lets their cache misses overlap with this one's instead of following it (~5% less CPU per
    // tick in the periodic-effects benchmark, three A/B pairs in a row).
    const n = w[(s << 3) | NEXT];
    if (n !== 0) this.lookahead = this.kv[w[(n << 3) | OWNER] << 1];
    const key = this.kv[k << 1] as K;
    const value = this.kv[(k << 1) | 1] as V;
    let stacksLeft = 0;
    if (w[(s << 3) | OLDER] === NONE && w[(s << 3) | NEWER] === NONE) {
      // The key's only stack, known from the stack's own cache line: the key's record is only
      // written, never read, and a store does not wait for its cache line as a load does (a
      // miss less per expiry of a periodic effect, ~10% of the benchmark's tick).
      const kw = this.kw;
      kw[(k << 2) | OLDEST] = NONE;
      kw[(k << 2) | NEWEST] = NONE;
      kw[(k << 2) | COUNT] = 0;
    } else {
      this.unlinkStack(k, s);
      stacksLeft = this.kw[(k << 2) | COUNT]!;
    }
    this.freeStack(s);
    if (timerSetExpireChannel.hasSubscribers) publishTimerSetExpire(this.owner!, key, stacksLeft);
    if (stacksLeft > 0) {
      this.onExpire.call(undefined, key, value, expireInfo(stacksLeft));
      return;
    }
    this.expiring = k;
    this.expiringEmpty = true;
    try {
      this.onExpire.call(undefined, key, value, expireInfo(0));
    } finally {
      // Unless delete(), clear() or close() from the callback has already let go of the slot.
      if (this.expiring === k) {
        this.expiring = NONE;
        const empty = this.expiringEmpty;
        this.expiringEmpty = false;
        if (empty || this.kw[(k << 2) | COUNT] === 0) {
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
}
