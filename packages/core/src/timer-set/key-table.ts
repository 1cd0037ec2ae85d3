/**
 * KeyTable: a TimerSet's keys, their values and stacks, the policies of `set()` and the expiring key.
 *
 * A `Map` finds the key slot `k` of a key. A slot holds its key and value side by side in one
 * plain array (`kv`), and its oldest and newest stack, its stack count and its paused flag side
 * by side in one Int32Array (`kw`), so that each is one cache line. Its stacks are slab indices
 * (`slab.ts`) chained oldest first through `OLDER`/`NEWER`; the wheel (`set-wheel.ts`) files them
 * in time and reports each that comes due to {@link KeyTable.fire}. A key with one stack, the
 * common case, is a Map entry, 16 bytes of `kv`, 16 of `kw` and 32 of slab: no object of its own.
 * Freed slots and indices are reused, newest first.
 *
 * A paused key's stacks are out of the wheel and hold their remaining ms in `DUE` instead of a
 * due tick; `PAUSED` says which reading applies.
 *
 * ## The expiring key
 * When a key's last stack fires, the key is gone *before* `onExpire` runs (`has(key)` is false),
 * but its slot, its record and its stack stay as they were while the callback runs, marked
 * `expiring` with `expiringEmpty` (every reader of a key goes through `live()` or `stackCount()`,
 * which see the mark). A periodic effect sets its key again from `onExpire`: that finds the slot
 * without a Map lookup and files the same stack index again, its record already right (one stack,
 * running). So a periodic effect's expiry costs one unlink and one link of its slab index, no
 * Map delete and insert, no write to its key's record and no allocation. If the callback does not
 * set the key again, the key leaves afterwards. Callbacks never nest within one set, so there is
 * at most one expiring key.
 */
import type { Clock, WakeupDriver } from '../clocks/clock.js';
import * as policies from './options.js';
import { expireInfo, type ExpireCallback } from './options.js';
import { SetWheel, type ExpirySink } from './set-wheel.js';
import * as slabFields from './slab.js';
import { grown, StackSlab } from './slab.js';

// Module-level copies of imported constants, which tsc's CommonJS output would otherwise read
// from the exporting module's exports object at every use.
const { DUE, NEWER, OLDER, OWNER } = slabFields;
const { EXTEND, IGNORE, MAX, REPLACE, STACK } = policies;

/** The set a `tickwheel:core:timer-set-expire` message names (the TimerSet, without importing it). */
/** How the table tells diagnostics of an expired stack: the set's channel and its publisher (timer-set.ts). */
export interface ExpireReport {
  readonly channel: { readonly hasSubscribers: boolean };
  publish(key: unknown, stacksLeft: number): void;
}

/** No key slot, no stack. */
export const NONE = -1;
/** Offsets of a key slot's fields in `kw`: its oldest and newest stack, its stack count, 1 when paused. */
const OLDEST = 0;
const NEWEST = 1;
const COUNT = 2;
const PAUSED = 3;
const KEY_WORDS = 4;

export class KeyTable<K, V> implements ExpirySink {
  /** Key slot of every key held, including the expiring one. */
  readonly slots = new Map<K, number>();
  /** The set's timers: its stacks, in time. */
  readonly wheel: SetWheel;
  /** Per key slot `k`: its key at `2k`, its value at `2k + 1` (one cache line for both). */
  private kv: unknown[] = [];
  /** Per key slot `k`, at `4k +` OLDEST, NEWEST, COUNT, PAUSED. */
  private kw = new Int32Array(8 * KEY_WORDS);
  private readonly freeKeys: number[] = [];
  private readonly slab = new StackSlab();
  /**
   * The last key `delete()` removed, known not to be in `slots` until `set()` adds a key: a dispel
   * and a re-application (delete + set) then cost three Map operations instead of four. (`===`:
   * a NaN key just takes the lookup.)
   */
  private absent: K | undefined = undefined;
  private absentKnown = false;
  /** The key slot whose last stack is expiring while its `onExpire` runs, or NONE. */
  private expiring = NONE;
  /**
   * True while the expiring key has no stacks running: its record still names its one stack,
   * `expiringStack`, which has left the wheel. Until `set()` revives it, the key is absent.
   */
  private expiringEmpty = false;
  /** The stack of the expiring key that just fired, kept (not freed) so that `set()` can refile it. */
  private expiringStack = NONE;
  /** Written only so that `fire()`'s look-ahead loads are not optimised away (never read). */
  lookahead: unknown = undefined;

  /**
   * @param report - publishes the set's `tickwheel:core:timer-set-expire` message
   * @param loopLimit - the outer wheel's `loopLimit`, which the set's wheel applies to its timers
   */
  constructor(
    clock: Clock,
    createDriver: (wake: () => void) => WakeupDriver,
    private readonly onExpire: ExpireCallback<K, V>,
    private readonly report: ExpireReport,
    loopLimit: number,
  ) {
    this.wheel = new SetWheel(this.slab, clock, createDriver, this, loopLimit);
  }

  /** The key's slot while it holds at least one stack, else NONE. */
  live(key: K): number {
    const k = this.slots.get(key);
    return k === undefined || this.stackCount(k) === 0 ? NONE : k;
  }

  /** The key slot's stacks: 0 for the expiring key until its callback sets it again. */
  stackCount(k: number): number {
    return k === this.expiring && this.expiringEmpty ? 0 : this.kw[(k << 2) | COUNT];
  }

  /** Keys held, not counting the expiring one. */
  get size(): number {
    return this.expiring !== NONE && this.stackCount(this.expiring) === 0 ? this.slots.size - 1 : this.slots.size;
  }

  valueAt(k: number): V {
    return this.kv[(k << 1) | 1] as V;
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
    return this.slab.w[(s << 3) | NEWER];
  }

  /** Game-time ms until the stack fires (or its frozen remaining time while its key is paused). */
  remainingOfStack(k: number, s: number): number {
    return this.kw[(k << 2) | PAUSED] === 1 ? this.slab.t[(s << 2) | DUE] : this.wheel.remainingOf(s);
  }

  /** Pauses a running key: each stack leaves the wheel and keeps its remaining time. */
  pauseKey(k: number): void {
    const slab = this.slab;
    for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE; s = slab.w[(s << 3) | NEWER]!) {
      const left = this.wheel.remainingOf(s);
      this.wheel.unschedule(s);
      slab.t[(s << 2) | DUE] = left;
    }
    this.kw[(k << 2) | PAUSED] = 1;
  }

  /** Resumes a paused key: each stack goes back into the wheel with its remaining time. */
  resumeKey(k: number): void {
    const slab = this.slab;
    this.kw[(k << 2) | PAUSED] = 0;
    for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE; s = slab.w[(s << 3) | NEWER]!)
      this.wheel.schedule(s, slab.t[(s << 2) | DUE]);
  }

  /** `set()` after its arguments were checked; `policy` is a code from options.ts. */
  set(key: K, ms: number, value: V, policy: number, maxStacks: number): void {
    // A key set again from its own onExpire (a periodic effect) needs no Map lookup.
    const expiring = this.expiring;
    let k =
      expiring !== NONE && this.kv[expiring << 1] === key
        ? expiring
        : this.absentKnown && this.absent === key
          ? undefined
          : this.slots.get(key);
    if (k === undefined) {
      this.absentKnown = false;
      k = this.newKey(key, value);
      this.slots.set(key, k);
      this.addStack(k, ms);
      return;
    }
    if (k === expiring && this.expiringEmpty) {
      // A periodic effect: the key is expiring right now and set again from its onExpire. Its
      // record already says one running stack, expiringStack: file it again.
      this.expiringEmpty = false;
      this.kv[(k << 1) | 1] = value;
      this.wheel.schedule(this.expiringStack, ms);
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
        for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE; s = this.slab.w[(s << 3) | NEWER]!) {
          if (ms > this.remainingOfStack(k, s)) this.setRemaining(k, s, ms);
        }
        break;
      case EXTEND:
        for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE; s = this.slab.w[(s << 3) | NEWER]!)
          this.setRemaining(k, s, this.remainingOfStack(k, s) + ms);
        break;
      case STACK:
        this.addStack(k, ms);
        while (this.kw[(k << 2) | COUNT] > maxStacks) this.dropStack(k, this.kw[(k << 2) | OLDEST]);
        break;
    }
    this.kv[(k << 1) | 1] = value;
  }

  /** `delete()`: the key leaves the Map and its slot is released. */
  deleteKey(key: K, k: number): void {
    this.slots.delete(key);
    this.releaseKey(k);
    this.absent = key;
    this.absentKnown = true;
  }

  /** Removes a key that has left (or is leaving) the Map: its stacks without reporting them, then its slot. */
  releaseKey(k: number): void {
    // The expiring key's one stack has left the wheel already.
    const emptied = k === this.expiring && this.expiringEmpty;
    this.freeKey(k, this.kw[(k << 2) | PAUSED] === 0 && !emptied);
    // Deleted (or cleared) from its own onExpire: fire() must not remove it a second time.
    if (this.expiring === k) {
      this.expiring = NONE;
      this.expiringEmpty = false;
    }
  }

  /**
   * A stack came due (it is out of the wheel): tell the owner. A key with other stacks loses this
   * one; a key's only stack makes the key the expiring one for the callback (see the module
   * comment), and the key leaves the Map afterwards unless the callback set it again.
   */
  fire(s: number, ahead: number): void {
    const w = this.slab.w;
    const k = w[(s << 3) | OWNER];
    // A stack this batch fires soon (its slab entry loaded already by the batch's look-ahead):
    // its key's cells and its value's first cache line, loaded now so that their misses overlap
    // with this expiry's work instead of following it. `typeof` reads the value's map word, the
    // user's onExpire will read the rest.
    if (ahead >= 0) this.lookahead = typeof this.kv[(w[(ahead << 3) | OWNER] << 1) | 1];
    const key = this.kv[k << 1] as K;
    const value = this.kv[(k << 1) | 1] as V;
    if (w[(s << 3) | OLDER] !== NONE || w[(s << 3) | NEWER] !== NONE) {
      this.unlinkStack(k, s);
      this.slab.free(s);
      const stacksLeft = this.kw[(k << 2) | COUNT];
      if (this.report.channel.hasSubscribers) this.report.publish(key, stacksLeft);
      this.onExpire.call(undefined, key, value, expireInfo(stacksLeft));
      return;
    }
    // The key's only stack, known from the stack's own cache line: the key's record is neither
    // read nor written (a miss less per expiry of a periodic effect).
    if (this.report.channel.hasSubscribers) this.report.publish(key, 0);
    this.expiring = k;
    this.expiringEmpty = true;
    this.expiringStack = s;
    try {
      this.onExpire.call(undefined, key, value, expireInfo(0));
    } finally {
      // Unless delete(), clear() or close() from the callback has already let go of the slot.
      if (this.expiring === k) {
        if (this.expiringEmpty) {
          this.slots.delete(key);
          this.releaseKey(k);
        } else this.expiring = NONE;
      }
    }
  }

  /**
   * A stack that kept re-arming for the tick being fired was cancelled by the wheel (it is out of
   * the wheel): the key loses it, and a key left with no stack leaves the Map, unreported.
   */
  cancel(s: number): void {
    const k = this.slab.w[(s << 3) | OWNER];
    this.unlinkStack(k, s);
    this.slab.free(s);
    if (this.kw[(k << 2) | COUNT] === 0) {
      this.slots.delete(this.kv[k << 1] as K);
      this.releaseKey(k);
    }
  }

  /** Releases the set's wake-up for good (after every key was released). */
  close(): void {
    this.wheel.close();
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
    const slab = this.slab;
    const s = slab.alloc(k);
    const w = slab.w;
    const tail = this.kw[(k << 2) | NEWEST];
    w[(s << 3) | OLDER] = tail;
    w[(s << 3) | NEWER] = NONE;
    if (tail === NONE) this.kw[(k << 2) | OLDEST] = s;
    else w[(tail << 3) | NEWER] = s;
    this.kw[(k << 2) | NEWEST] = s;
    this.kw[(k << 2) | COUNT]++;
    if (this.kw[(k << 2) | PAUSED] === 1) slab.t[(s << 2) | DUE] = ms;
    else this.wheel.schedule(s, ms);
  }

  /**
   * Frees key slot `k` and its stacks without reporting them; `running` says whether they are
   * filed in the wheel (false for a paused key, or when its one stack has already left it).
   */
  private freeKey(k: number, running: boolean): void {
    const newest = this.kw[(k << 2) | NEWEST];
    for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE;) {
      // The newest is the last: a key's only stack is discarded without loading its cache line.
      const next = s === newest ? NONE : this.slab.w[(s << 3) | NEWER];
      if (running) this.wheel.discard(s);
      else this.slab.free(s);
      s = next;
    }
    this.kw[(k << 2) | OLDEST] = NONE;
    this.kw[(k << 2) | NEWEST] = NONE;
    this.kw[(k << 2) | COUNT] = 0;
    this.kw[(k << 2) | PAUSED] = 0;
    // A free slot must not keep the caller's key and value alive.
    this.kv[k << 1] = undefined;
    this.kv[(k << 1) | 1] = undefined;
    this.freeKeys.push(k);
  }

  /** Gives stack `s` `ms` to go from now (a frozen remaining time while its key is paused). */
  private setRemaining(k: number, s: number, ms: number): void {
    if (this.kw[(k << 2) | PAUSED] === 1) this.slab.t[(s << 2) | DUE] = ms;
    else this.wheel.reschedule(s, ms);
  }

  /** Takes stack `s` out of its key's chain (the stack itself stays as it is). */
  private unlinkStack(k: number, s: number): void {
    const w = this.slab.w;
    const older = w[(s << 3) | OLDER];
    const newer = w[(s << 3) | NEWER];
    if (older === NONE) this.kw[(k << 2) | OLDEST] = newer;
    else w[(older << 3) | NEWER] = newer;
    if (newer === NONE) this.kw[(k << 2) | NEWEST] = older;
    else w[(newer << 3) | OLDER] = older;
    this.kw[(k << 2) | COUNT]--;
  }

  /** Removes a stack without reporting it (a dropped oldest stack, or one collapsed by `'replace'`). */
  private dropStack(k: number, s: number): void {
    this.unlinkStack(k, s);
    if (this.kw[(k << 2) | PAUSED] === 0) this.wheel.discard(s);
    else this.slab.free(s);
  }
}
