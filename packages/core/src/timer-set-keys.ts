/**
 * The key records of a TimerSet: per key slot its key, value and chain of stacks, over the slab wheel.
 * Must not depend on: the key Map, the expiring key or onExpire (timer-set-store.ts adds those).
 *
 * A key lives in a key slot `k`: its key and value side by side in one plain array (`kv`), its
 * oldest and newest stack, its stack count and its paused flag side by side in one Int32Array
 * (`kw`), so that each is one cache line. Its stacks are slab indices (`timer-set-slab.ts`)
 * chained oldest first through `OLDER`/`NEWER`. A key with one stack, the common case, is
 * 16 bytes of `kv`, 16 of `kw` and 32 of slab: no object of its own. Freed slots and indices are
 * reused, newest first.
 *
 * A paused key's stacks are out of the wheel and hold their remaining ms in `DUE` instead of a
 * due tick; `PAUSED` says which reading applies.
 */
import * as slab from './timer-set-slab.js';
import { grown } from './timer-set-slab.js';
import { SetWheel } from './timer-set-wheel.js';

// Module-level copies of imported constants, which tsc's CommonJS output would otherwise read
// from the exporting module's exports object at every use (see timer-set-wheel.ts).
const { DUE, NEWER, OLDER } = slab;

/** No key slot, no stack. */
export const NONE = -1;
/** Offsets of a key slot's fields in `kw`: its oldest and newest stack, its stack count, 1 when paused. */
export const OLDEST = 0;
export const NEWEST = 1;
export const COUNT = 2;
export const PAUSED = 3;
const KEY_WORDS = 4;

export abstract class KeyRecords<K, V> extends SetWheel {
  /** Per key slot `k`: its key at `2k`, its value at `2k + 1` (one cache line for both). */
  kv: unknown[] = [];
  /** Per key slot `k`, at `4k +` OLDEST, NEWEST, COUNT, PAUSED. */
  kw = new Int32Array(8 * KEY_WORDS);
  private freeKeys: number[] = [];

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
    return this.w[(s << 3) | NEWER];
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

  /**
   * Frees key slot `k` and its stacks without reporting them; `running` says whether they are
   * filed in the wheel (false for a paused key, or when its one stack has already left it).
   */
  freeKey(k: number, running: boolean): void {
    const newest = this.kw[(k << 2) | NEWEST];
    for (let s = this.kw[(k << 2) | OLDEST]; s !== NONE;) {
      // The newest is the last: a key's only stack is discarded without loading its cache line.
      const next = s === newest ? NONE : this.w[(s << 3) | NEWER];
      if (running) this.discard(s);
      else this.freeStack(s);
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

  /** Gives stack `s` `ms` to go from now (a frozen remaining time while its key is paused). */
  protected setRemaining(k: number, s: number, ms: number): void {
    if (this.kw[(k << 2) | PAUSED] === 1) this.t[(s << 2) | DUE] = ms;
    else this.reschedule(s, ms);
  }

  /** Takes stack `s` out of its key's chain (the stack itself stays as it is). */
  protected unlinkStack(k: number, s: number): void {
    const older = this.w[(s << 3) | OLDER];
    const newer = this.w[(s << 3) | NEWER];
    if (older === NONE) this.kw[(k << 2) | OLDEST] = newer;
    else this.w[(older << 3) | NEWER] = newer;
    if (newer === NONE) this.kw[(k << 2) | NEWEST] = older;
    else this.w[(newer << 3) | OLDER] = older;
    this.kw[(k << 2) | COUNT]--;
  }

  /** Removes a stack without reporting it (a dropped oldest stack, or one collapsed by `'replace'`). */
  protected dropStack(k: number, s: number): void {
    this.unlinkStack(k, s);
    if (this.kw[(k << 2) | PAUSED] === 0) this.discard(s);
    else this.freeStack(s);
  }
}
