/**
 * # Keyed timers for game servers
 *
 * A `TimerSet<V, K>` holds timers by key, each with a value: the buffs, debuffs, cooldowns and
 * damage-over-time effects of every entity of a game server, keyed `"<entity>:<effect>"` or by
 * any other Map key. It reports each expiry through one `onExpire(key, value, info)` callback.
 *
 * ## Game time: one clock per set, driven by one timer
 * The set keeps its timers on a private {@link TimingWheel} whose clock is a
 * {@link PausableClock}: the outer wheel's time minus the time the set has spent paused. The
 * private wheel's single wake-up is one handle on the outer wheel (the wheel you pass, or
 * `sharedWheel()`). So a set with a million timers costs the outer wheel one timer, `pause()`
 * stops the whole set by cancelling that one handle, and `resume()` re-arms it: both O(1), and
 * no remaining time moves while the set is paused, because its time does not.
 *
 * A single key is paused by cancelling its own handle(s) and keeping the remaining time; resuming
 * re-arms the same handle. Key pauses and the set's pause are independent: `resume()` does not
 * resume a key paused with `pause(key)`.
 *
 * ## Stacks
 * A key holds one or more stacks, oldest first. Only the `'stack'` policy adds stacks; each has
 * its own expiry and calls `onExpire` with the number of stacks left. When the last one expires
 * the key is gone *before* `onExpire` runs (`has(key)` is false), so the callback may set it
 * again: a periodic effect (damage every second) is a key that sets itself from `onExpire`.
 *
 * ## Cost
 * `set`, `delete`, `has`, `get`, `remaining`, `stacks`, `pause(key)`, `resume(key)` are O(1) for
 * a key with one stack, and O(stacks of that key) otherwise (bounded by `maxStacks`). `pause()`
 * and `resume()` of the whole set are O(1). `snapshot`, `restore` and `clear` are O(n).
 *
 * ## Order
 * Expiries run in order of due time (whole ms of game time). Timers due on the same millisecond
 * run in an order fixed by the sequence of calls alone: usually the order they were set, though a
 * timer that a policy pushed later can come after timers set for its new millisecond in the
 * meantime (the wheel re-files it lazily). On a `ManualClock` the same calls therefore always
 * produce the same callbacks in the same order, and so does a fixed-step loop.
 */
import { publishTimerSetExpire } from './channels.js';
import type { Clock } from './clock.js';
import { PausableClock } from './pausable-clock.js';
import { sharedWheel } from './shared-wheel.js';
import type { TimerHandle } from './timer-handle.js';
import {
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  copyJsonValue,
  isSnapshotKey,
  readSnapshot,
  type SavedTimer,
  type SnapshotKey,
  type TimerSetSnapshot,
} from './timer-set-snapshot.js';
import { isTimingWheel, TimingWheel } from './timing-wheel.js';
import { describeValue, requireFunction, requireMs } from './validate.js';

/**
 * What {@link TimerSet.set} does when the key already has a timer:
 * - `'replace'` (default): the new duration from now, the new value; extra stacks are dropped.
 * - `'max'`: a high-watermark refresh: each stack keeps the later of its expiry and now + duration.
 * - `'extend'`: each stack's remaining time grows by the duration.
 * - `'ignore'`: nothing changes, not even the value.
 * - `'stack'`: an independent stack with its own expiry is added, up to `maxStacks`; the oldest
 *   stack is dropped (without `onExpire`) when the limit is exceeded.
 *
 * Every policy but `'ignore'` stores the new value. A missing key is created by every policy.
 */
export type TimerPolicy = 'replace' | 'max' | 'extend' | 'ignore' | 'stack';

const POLICIES: readonly TimerPolicy[] = ['replace', 'max', 'extend', 'ignore', 'stack'];

/** Options of one {@link TimerSet.set} call. */
export interface TimerSetOptions {
  /** What to do when the key already has a timer. Default `'replace'`. */
  policy?: TimerPolicy;
  /** With `policy: 'stack'`: the most stacks the key may hold, an integer >= 1 or Infinity. Default Infinity. */
  maxStacks?: number;
}

/** The third argument of `onExpire`: frozen, and shared between calls with the same content. */
export interface ExpireInfo {
  /** Stacks the key still holds after this one expired; 0 means the key is gone. */
  readonly stacksLeft: number;
}

/** Called once per expired stack, with `this` undefined. It may set, delete, pause or resume any key. */
export type ExpireCallback<K, V> = (key: K, value: V, info: ExpireInfo) => void;

/** Options of the {@link TimerSet} constructor. */
export interface TimerSetConstructorOptions<V, K> {
  /** The wheel that drives the set (it gets one timer). Default `sharedWheel()`; a game loop passes a wheel on its `ManualClock`. */
  wheel?: TimingWheel;
  /** Receives every expiry. An error it throws goes to the wheel's `onError` (or out of `clock.advance()`). */
  onExpire: ExpireCallback<K, V>;
}

/** Options of {@link TimerSet.restore}. */
export interface TimerSetRestoreOptions<V> {
  /** As for the constructor. Default `sharedWheel()`. */
  wheel?: TimingWheel;
  /** As for the constructor. */
  onExpire: ExpireCallback<SnapshotKey, V>;
  /**
   * How to treat the wall-clock time between the snapshot and now:
   * - `'frozen'`: it did not happen; every timer resumes with its saved remaining time.
   * - `'elapsed'`: running timers lose it (timers that ran out fire on the next pass, in
   *   snapshot order); keys paused with `pause(key)` and a set saved while paused keep their time.
   */
  offline: 'frozen' | 'elapsed';
}

/**
 * One stack of a key: its handle on the set's private wheel while it runs, its remaining time
 * while paused. Its handle's callback is a closure over the stack, made once: a recycled stack
 * re-arms the same handle with `refresh()`.
 */
class Stack<K, V> {
  handle: TimerHandle | undefined = undefined;
  remainingMs = 0;
  prev: Stack<K, V> | null = null;
  next: Stack<K, V> | null = null;
  constructor(public entry: Entry<K, V>) {}
}

/** One key: its value and its stacks, oldest first. */
class Entry<K, V> {
  head: Stack<K, V> | null = null;
  tail: Stack<K, V> | null = null;
  count = 0;
  paused = false;
  constructor(
    public key: K,
    public value: V,
  ) {}
}

/**
 * Finished stacks and entries kept for reuse, at most this many of each. A buff that expires and
 * is applied again from `onExpire` (the steady state of a game world) then allocates nothing,
 * which keeps a busy tick's garbage, and so its GC time, low.
 */
const POOL_LIMIT = 1024;

/** Shared, frozen `info` objects for the common stack counts, so an expiry allocates nothing. */
const EXPIRE_INFOS: readonly ExpireInfo[] = Array.from({ length: 16 }, (_, stacksLeft) => Object.freeze({ stacksLeft }));

/**
 * Timers by key, each carrying a value, with refresh policies, stacks, pause (per key and for
 * the whole set) and JSON snapshots. See the module comment for the design.
 *
 * Keys are compared as Map keys. Any key works, but {@link TimerSet.snapshot} needs string or
 * finite number keys.
 *
 * @typeParam V - the value each timer carries (JSON data if you want to snapshot it)
 * @typeParam K - the key type, `string | number` by default
 * @example
 * ```ts
 * const clock = new ManualClock(0);
 * const wheel = new TimingWheel({ clock });
 * const buffs = new TimerSet<{ armor: number }>({
 *   wheel,
 *   onExpire: (key, buff, { stacksLeft }) => console.log(`${key} -${buff.armor} armor, ${stacksLeft} left`),
 * });
 * buffs.set('hero:shield', 10_000, { armor: 5 }, { policy: 'stack', maxStacks: 3 });
 * clock.advance(10_000); // hero:shield -5 armor, 0 left
 * ```
 */
export class TimerSet<V, K = SnapshotKey> {
  private readonly entries = new Map<K, Entry<K, V>>();
  private readonly outer: TimingWheel;
  private readonly gameClock: PausableClock;
  private readonly inner: TimingWheel;
  private readonly onExpire: ExpireCallback<K, V>;
  private readonly freeStacks: Stack<K, V>[] = [];
  private readonly freeEntries: Entry<K, V>[] = [];
  /**
   * The entry whose last stack is expiring while its `onExpire` runs. It stays in the map with no
   * stacks (every method treats it as absent), so that a callback setting the same key again, as
   * periodic effects do, revives it without a Map delete and insert. Callbacks never nest within
   * one set, so there is at most one.
   */
  private expiring: Entry<K, V> | null = null;
  private closed = false;

  /**
   * @param options - `onExpire`, and the `wheel` to run on (default `sharedWheel()`)
   * @throws TypeError when `onExpire` is not a function or `wheel` is not a TimingWheel; Error when the wheel is closed
   */
  constructor(options: TimerSetConstructorOptions<V, K>) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`options must be an object with an onExpire function, got ${describeValue(options)}`);
    }
    this.onExpire = requireFunction<ExpireCallback<K, V>>(options.onExpire, 'onExpire');
    const wheel = options.wheel ?? sharedWheel();
    if (!isTimingWheel(wheel)) throw new TypeError(`wheel must be a TimingWheel, got ${describeValue(wheel)}`);
    if (wheel.isClosed) throw new Error('wheel is closed: a TimerSet needs an open TimingWheel');
    this.outer = wheel;
    this.gameClock = new PausableClock(wheel);
    // 1 ms ticks in game time, so the only rounding is the outer wheel's: never early, at most one of its ticks late.
    this.inner = new TimingWheel({ clock: this.gameClock, tickMs: 1, wheelSize: wheel.wheelSize });
  }

  /** Keys held (a key with several stacks counts once). */
  get size(): number {
    return this.expiring !== null && this.expiring.count === 0 ? this.entries.size - 1 : this.entries.size;
  }

  /** The set's game time in ms: the wheel clock's time minus the time spent paused. Stands still while paused. */
  get clock(): Clock {
    return this.gameClock;
  }

  /**
   * Sets a timer of `durationMs` for `key`, carrying `value`; what happens to an existing timer
   * for the key depends on `options.policy` (see {@link TimerPolicy}). O(1) for a key with one
   * stack. A key paused with `pause(key)` stays paused, and the policy applies to its frozen
   * remaining time.
   *
   * @param key - any Map key (string or finite number if you want to snapshot)
   * @param durationMs - a finite number >= 0 (game-time ms); 0 fires on the next pass, never synchronously
   * @param value - handed back to `onExpire`; `get(key)` returns it
   * @returns this set
   * @throws TypeError/RangeError for a bad duration, policy or maxStacks; Error after `close()`.
   *   Nothing changes when it throws.
   * @example
   * ```ts
   * cooldowns.set('hero:fireball', 8_000, null, { policy: 'ignore' }); // already cooling down: no reset
   * buffs.set('hero:haste', 5_000, haste, { policy: 'max' });          // re-applied: the longer one wins
   * ```
   */
  set(key: K, durationMs: number, value: V, options?: TimerSetOptions): this {
    if (typeof durationMs !== 'number' || !(durationMs >= 0) || durationMs === Infinity) requireMs(durationMs, 'durationMs');
    let policy: TimerPolicy = 'replace';
    let maxStacks = Infinity;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') {
        throw new TypeError(`options must be an object, got ${describeValue(options)}`);
      }
      if (options.policy !== undefined) policy = requirePolicy(options.policy);
      if (options.maxStacks !== undefined) maxStacks = requireMaxStacks(options.maxStacks);
    }
    if (this.closed || this.outer.isClosed) throw this.closedError();

    // A key set again from its own onExpire (a periodic effect) needs no Map lookup.
    const expiring = this.expiring;
    const entry = expiring !== null && expiring.key === key ? expiring : this.entries.get(key);
    if (entry === undefined) {
      const created = this.newEntry(key, value);
      this.entries.set(key, created);
      this.addStack(created, durationMs);
      return this;
    }
    if (entry.count === 0) {
      // The key is expiring right now (we are inside its onExpire): set it afresh.
      entry.value = value;
      entry.paused = false;
      this.addStack(entry, durationMs);
      return this;
    }
    switch (policy) {
      case 'ignore':
        return this;
      case 'replace':
        while (entry.count > 1) this.dropStack(entry.tail!);
        this.setRemaining(entry.head!, durationMs);
        break;
      case 'max':
        for (let s = entry.head; s !== null; s = s.next) {
          if (durationMs > this.remainingOf(s)) this.setRemaining(s, durationMs);
        }
        break;
      case 'extend':
        for (let s = entry.head; s !== null; s = s.next) this.setRemaining(s, this.remainingOf(s) + durationMs);
        break;
      case 'stack':
        this.addStack(entry, durationMs);
        while (entry.count > maxStacks) this.dropStack(entry.head!);
        break;
    }
    entry.value = value;
    return this;
  }

  /**
   * Removes the key and all its stacks without calling `onExpire` (a dispel). O(1) for a key with one stack.
   * @returns true if the key existed
   */
  delete(key: K): boolean {
    const entry = this.live(key);
    if (entry === undefined) return false;
    this.entries.delete(key);
    this.releaseEntry(entry);
    return true;
  }

  /** True while the key has at least one stack. */
  has(key: K): boolean {
    return this.live(key) !== undefined;
  }

  /** The key's value, or undefined when the key is not set. */
  get(key: K): V | undefined {
    return this.live(key)?.value;
  }

  /**
   * Game-time ms until the key is gone (its last stack expires), or undefined when the key is not
   * set. Paused keys (and a paused set) report their frozen remaining time.
   */
  remaining(key: K): number | undefined {
    const entry = this.live(key);
    if (entry === undefined) return undefined;
    let most = 0;
    for (let s = entry.head; s !== null; s = s.next) {
      const ms = this.remainingOf(s);
      if (ms > most) most = ms;
    }
    return most;
  }

  /** The key's remaining time per stack, oldest stack first; empty when the key is not set. */
  remainingPerStack(key: K): number[] {
    const out: number[] = [];
    const entry = this.live(key);
    if (entry !== undefined) for (let s = entry.head; s !== null; s = s.next) out.push(this.remainingOf(s));
    return out;
  }

  /** How many stacks the key holds; 0 when it is not set. */
  stacks(key: K): number {
    return this.live(key)?.count ?? 0;
  }

  /**
   * Pauses one key (its remaining time is kept exactly) or, without a key, the whole set (the game
   * is paused: game time stops, O(1) however many timers). `set()` keeps working while paused.
   *
   * @returns true if something was running and is now paused; false for an unknown or already paused key
   * @example
   * ```ts
   * buffs.pause();           // the match is paused
   * buffs.pause('hero:dot'); // a stasis effect freezes just this debuff
   * ```
   */
  pause(key?: K): boolean {
    if (arguments.length === 0) return this.gameClock.pause();
    const entry = this.live(key as K);
    if (entry === undefined || entry.paused) return false;
    for (let s = entry.head; s !== null; s = s.next) {
      s.remainingMs = s.handle!.remaining();
      s.handle!.cancel();
    }
    entry.paused = true;
    return true;
  }

  /**
   * Resumes one key paused with `pause(key)`, or, without a key, the whole set paused with
   * `pause()` (keys paused on their own stay paused).
   *
   * @returns true if something was paused and now runs; false for an unknown or running key
   */
  resume(key?: K): boolean {
    if (arguments.length === 0) return this.gameClock.resume();
    const entry = this.live(key as K);
    if (entry === undefined || !entry.paused) return false;
    entry.paused = false;
    for (let s = entry.head; s !== null; s = s.next) this.run(s, s.remainingMs);
    return true;
  }

  /** Whether the key (with an argument) or the whole set (without) is paused by `pause()`. */
  isPaused(key?: K): boolean {
    if (arguments.length === 0) return this.gameClock.paused;
    return this.live(key as K)?.paused ?? false;
  }

  /** The keys, in insertion order (a key set again from its own `onExpire` keeps its place). */
  *keys(): IterableIterator<K> {
    for (const entry of this.entries.values()) if (entry.count > 0) yield entry.key;
  }

  /** Removes every key without calling `onExpire`. O(n). */
  clear(): void {
    for (const entry of this.entries.values()) this.releaseEntry(entry);
    this.entries.clear();
  }

  /** Clears the set and releases its timer on the wheel; `set()` throws afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clear();
    this.inner.close();
  }

  /** Same as {@link TimerSet.close}, for `using buffs = new TimerSet(...)`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * A JSON-serialisable copy of every key: value, paused state and the remaining time of each
   * stack, plus the set's own paused state and the wall-clock time (`Date.now()`). O(n).
   *
   * Values are deep-copied, so later changes to them do not alter the save.
   *
   * @throws TypeError naming the key when a key is not a string or finite number, or a value
   *   would not survive JSON unchanged (a function, undefined, NaN, a Date, a Map, a class
   *   instance, a cycle...). No partial snapshot is ever returned.
   * @example
   * ```ts
   * await fs.writeFile('buffs.json', JSON.stringify(buffs.snapshot()));
   * ```
   */
  snapshot(): TimerSetSnapshot<V> {
    const timers: SavedTimer<V>[] = [];
    for (const entry of this.entries.values()) {
      if (entry.count === 0) continue;
      const key: unknown = entry.key;
      if (!isSnapshotKey(key)) {
        throw new TypeError(`snapshot: key ${describeValue(key)} cannot be saved: snapshot() needs string or finite number keys`);
      }
      const value = copyJsonValue(entry.value, key) as V;
      const remainingMs: number[] = [];
      for (let s = entry.head; s !== null; s = s.next) remainingMs.push(this.remainingOf(s));
      timers.push({ key, value, paused: entry.paused, remainingMs });
    }
    return {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      savedAt: Date.now(),
      paused: this.gameClock.paused,
      timers,
    };
  }

  /**
   * Builds a set from a {@link TimerSet.snapshot} (as is, or after `JSON.parse`). O(n).
   *
   * @throws TypeError/RangeError naming the field and key when `saved` is not a valid snapshot,
   *   or naming the option when an option is bad; nothing is scheduled then
   * @example
   * ```ts
   * const saved = JSON.parse(await fs.readFile('buffs.json', 'utf8'));
   * const buffs = TimerSet.restore<Buff>(saved, { wheel, onExpire, offline: 'elapsed' });
   * ```
   */
  static restore<V>(saved: TimerSetSnapshot<V>, options: TimerSetRestoreOptions<V>): TimerSet<V, SnapshotKey> {
    const snapshot = readSnapshot<V>(saved);
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`options must be an object with onExpire and offline, got ${describeValue(options)}`);
    }
    if (options.offline !== 'frozen' && options.offline !== 'elapsed') {
      throw new RangeError(`offline must be 'frozen' or 'elapsed', got ${describeValue(options.offline)}`);
    }
    const values = snapshot.timers.map((timer) => copyJsonValue(timer.value, timer.key) as V);
    const set = new TimerSet<V, SnapshotKey>({ wheel: options.wheel, onExpire: options.onExpire });
    const elapsedMs = options.offline === 'elapsed' && !snapshot.paused ? Math.max(0, Date.now() - snapshot.savedAt) : 0;
    if (snapshot.paused) set.gameClock.pause();
    snapshot.timers.forEach((timer, i) => {
      const entry = set.newEntry(timer.key, values[i]!);
      entry.paused = timer.paused;
      set.entries.set(timer.key, entry);
      for (const ms of timer.remainingMs) set.addStack(entry, timer.paused ? ms : Math.max(0, ms - elapsedMs));
    });
    return set;
  }

  /** The key's entry, unless the key is absent or is the one expiring right now. */
  private live(key: K): Entry<K, V> | undefined {
    const entry = this.entries.get(key);
    return entry === undefined || entry.count === 0 ? undefined : entry;
  }

  private newEntry(key: K, value: V): Entry<K, V> {
    const entry = this.freeEntries.pop();
    if (entry === undefined) return new Entry<K, V>(key, value);
    entry.key = key;
    entry.value = value;
    return entry;
  }

  /** Links a new newest stack with `ms` to go; it runs unless its key is paused. */
  private addStack(entry: Entry<K, V>, ms: number): void {
    let stack = this.freeStacks.pop();
    if (stack === undefined) stack = new Stack<K, V>(entry);
    else stack.entry = entry;
    if (entry.tail === null) entry.head = stack;
    else {
      entry.tail.next = stack;
      stack.prev = entry.tail;
    }
    entry.tail = stack;
    entry.count++;
    if (entry.paused) stack.remainingMs = ms;
    else this.run(stack, ms);
  }

  /** Arms the stack's handle `ms` of game time from now, creating it on first use. */
  private run(stack: Stack<K, V>, ms: number): void {
    if (stack.handle === undefined) stack.handle = this.inner.schedule(ms, () => this.expire(stack));
    else stack.handle.refresh(ms);
  }

  private remainingOf(stack: Stack<K, V>): number {
    return stack.entry.paused ? stack.remainingMs : stack.handle!.remaining();
  }

  private setRemaining(stack: Stack<K, V>, ms: number): void {
    if (stack.entry.paused) stack.remainingMs = ms;
    else this.run(stack, ms);
  }

  private unlinkStack(stack: Stack<K, V>): void {
    const entry = stack.entry;
    if (stack.prev === null) entry.head = stack.next;
    else stack.prev.next = stack.next;
    if (stack.next === null) entry.tail = stack.prev;
    else stack.next.prev = stack.prev;
    stack.prev = null;
    stack.next = null;
    entry.count--;
  }

  /** Removes a stack without reporting it (a dropped oldest stack, or a stack collapsed by `'replace'`). */
  private dropStack(stack: Stack<K, V>): void {
    this.unlinkStack(stack);
    stack.handle?.cancel();
    this.releaseStack(stack);
  }

  /** Puts an unlinked stack, whose handle is no longer pending, up for reuse. */
  private releaseStack(stack: Stack<K, V>): void {
    if (this.freeStacks.length < POOL_LIMIT) this.freeStacks.push(stack);
  }

  /** Cancels and releases every stack of an entry that has left the map, then the entry itself. */
  private releaseEntry(entry: Entry<K, V>): void {
    for (let s = entry.head; s !== null; ) {
      const next = s.next;
      s.handle?.cancel();
      s.prev = null;
      s.next = null;
      this.releaseStack(s);
      s = next;
    }
    entry.head = null;
    entry.tail = null;
    entry.count = 0;
    entry.paused = false;
    // Deleted (or cleared) from its own onExpire: expire() must not remove it a second time.
    if (this.expiring === entry) this.expiring = null;
    // A pooled entry must not keep the caller's key and value alive.
    entry.key = undefined as K;
    entry.value = undefined as V;
    if (this.freeEntries.length < POOL_LIMIT) this.freeEntries.push(entry);
  }

  /**
   * A stack's handle fired: unlink it, then tell the owner. The stack is released before
   * `onExpire` runs, so a buff applied again from the callback reuses it, re-arming the very
   * handle that is firing. When it was the last stack, the key counts as gone during the callback
   * (see `expiring`) and leaves the map afterwards unless the callback set it again.
   */
  private expire(stack: Stack<K, V>): void {
    const entry = stack.entry;
    const { key, value } = entry;
    this.unlinkStack(stack);
    this.releaseStack(stack);
    const stacksLeft = entry.count;
    const info = stacksLeft < EXPIRE_INFOS.length ? EXPIRE_INFOS[stacksLeft]! : Object.freeze({ stacksLeft });
    publishTimerSetExpire(this as TimerSet<unknown, unknown>, key, stacksLeft);
    if (stacksLeft > 0) {
      this.onExpire.call(undefined, key, value, info);
      return;
    }
    this.expiring = entry;
    try {
      this.onExpire.call(undefined, key, value, info);
    } finally {
      // Unless delete(), clear() or close() from the callback has already let go of the entry.
      if (this.expiring === entry) {
        this.expiring = null;
        if (entry.count === 0) {
          this.entries.delete(key);
          this.releaseEntry(entry);
        }
      }
    }
  }

  private closedError(): Error {
    return this.closed
      ? new Error('TimerSet is closed: it cannot set timers after close()')
      : new Error('TimingWheel is closed: the TimerSet cannot set timers on it');
  }
}

function requirePolicy(policy: unknown): TimerPolicy {
  if (!POLICIES.includes(policy as TimerPolicy)) {
    throw new RangeError(`policy must be one of ${POLICIES.map((p) => `'${p}'`).join(', ')}, got ${describeValue(policy)}`);
  }
  return policy as TimerPolicy;
}

function requireMaxStacks(maxStacks: unknown): number {
  if (typeof maxStacks !== 'number') {
    throw new TypeError(`maxStacks must be an integer >= 1 or Infinity, got ${describeValue(maxStacks)} (${typeof maxStacks})`);
  }
  if (maxStacks !== Infinity && !(Number.isInteger(maxStacks) && maxStacks >= 1)) {
    throw new RangeError(`maxStacks must be an integer >= 1 or Infinity, got ${maxStacks}`);
  }
  return maxStacks;
}
