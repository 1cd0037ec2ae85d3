/**
 * The keys of a {@link TimerSet}: the Map from key to key slot, the policies of `set()` and the expiring key.
 * Must not depend on: node:timers or the public TimerSet API (it is the set's engine, not its client).
 *
 * A `Map` finds the key slot of a key; the slot's record and its stacks are in
 * `timer-set-keys.ts`, the stacks' place in time in `timer-set-wheel.ts`.
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
import { publishTimerSetExpire, timerSetExpireChannel } from './channels.js';
import type { Clock, WakeupDriver } from './clocks/clock.js';
import * as options from './timer-set-options.js';
import { expireInfo, type ExpireCallback } from './timer-set-options.js';
import type { TimerSet } from './timer-set.js';
import * as keys from './timer-set-keys.js';
import { KeyRecords } from './timer-set-keys.js';
import * as slab from './timer-set-slab.js';

// Module-level copies of imported constants, which tsc's CommonJS output would otherwise read
// from the exporting module's exports object at every use (see timer-set-wheel.ts).
const { NEWER, OLDER, OWNER } = slab;
const { COUNT, NEWEST, NONE, OLDEST, PAUSED } = keys;
const { EXTEND, IGNORE, MAX, REPLACE, STACK } = options;

export class KeyedStacks<K, V> extends KeyRecords<K, V> {
  /** Key slot of every key held, including the expiring one. */
  readonly slots = new Map<K, number>();
  /**
   * The last key `delete()` removed, known not to be in `slots` until `set()` adds a key: a dispel
   * and a re-application (delete + set) then cost three Map operations instead of four. (`===`:
   * a NaN key just takes the lookup.)
   */
  private absent: K | undefined = undefined;
  private absentKnown = false;
  /** The key slot whose last stack is expiring while its `onExpire` runs, or NONE. */
  expiring = NONE;
  /**
   * True while the expiring key has no stacks running: its record still names its one stack,
   * `expiringStack`, which has left the wheel. Until `set()` revives it, the key is absent.
   */
  private expiringEmpty = false;
  /** The stack of the expiring key that just fired, kept (not freed) so that `set()` can refile it. */
  private expiringStack = NONE;
  /** Written only so that `fire()`'s look-ahead loads are not optimised away (never read). */
  lookahead: unknown = undefined;
  /** The TimerSet this store belongs to, named in the `tickwheel:core:timer-set-expire` message. */
  owner: TimerSet<unknown, unknown> | undefined = undefined;

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

  /** `set()` after its arguments were checked; `policy` is a code from timer-set-options.ts. */
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
      this.schedule(this.expiringStack, ms);
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
  protected fire(s: number, ahead: number): void {
    const w = this.w;
    const k = w[(s << 3) | OWNER];
    // A stack this batch fires soon (its slab entry loaded already by the batch's look-ahead):
    // its key's cells and its value's first cache line, loaded now so that their misses overlap
    // with this expiry's work instead of following it (-5% CPU per tick in the periodic-effects
    // benchmark for the key cells, three A/B pairs). `typeof` reads the value's map word, the
    // user's onExpire will read the rest.
    if (ahead >= 0) this.lookahead = typeof this.kv[(w[(ahead << 3) | OWNER] << 1) | 1];
    const key = this.kv[k << 1] as K;
    const value = this.kv[(k << 1) | 1] as V;
    if (w[(s << 3) | OLDER] !== NONE || w[(s << 3) | NEWER] !== NONE) {
      this.unlinkStack(k, s);
      this.freeStack(s);
      const stacksLeft = this.kw[(k << 2) | COUNT];
      if (timerSetExpireChannel.hasSubscribers) publishTimerSetExpire(this.owner!, key, stacksLeft);
      this.onExpire.call(undefined, key, value, expireInfo(stacksLeft));
      return;
    }
    // The key's only stack, known from the stack's own cache line: the key's record is neither
    // read nor written (a miss less per expiry of a periodic effect).
    if (timerSetExpireChannel.hasSubscribers) publishTimerSetExpire(this.owner!, key, 0);
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

  /** Releases the set's wake-up for good (after every key was released). */
  close(): void {
    this.closeWheel();
  }
}
