/**
 * TimerSet: keyed, stackable, pausable timers for game servers, on one outer-wheel handle.
 *
 * # Keyed timers for game servers
 *
 * A `TimerSet<V, K>` holds timers by key, each with a value: the buffs, debuffs, cooldowns and
 * damage-over-time effects of every entity of a game server, keyed `"<entity>:<effect>"` or by
 * any other Map key. It reports each expiry through one `onExpire(key, value, info)` callback.
 *
 * ## Game time: one clock per set, driven by one timer
 * The set keeps its timers on a private wheel whose clock is a {@link GameClock}: the outer
 * wheel's time, stopped while the set is paused and run at `timeScale` times its speed. The
 * private wheel's single wake-up is one handle on the outer wheel (the wheel you pass, or
 * `sharedWheel()`). So a set with a million timers costs the outer wheel one timer; `pause()`
 * stops the whole set by cancelling that one handle and `resume()` re-arms it; and
 * `setTimeScale()` re-arms it for the new speed: all O(1). No timer's remaining game time moves
 * while the set is paused or when the scale changes, because the timers are filed in game time.
 *
 * ## Game speed
 * `timeScale` (an option, and `setTimeScale(factor)`) runs game time at `factor` times the
 * wheel's time: 0.5 is slow motion, 2 fast-forward, 0 a frozen world. Every duration given to
 * `set()` and every figure read back (`remaining()`, `snapshot()`) is game time; only how much
 * wheel time a timer takes to run out changes with the scale. Pause and scale are separate, as
 * Unity's `Time.timeScale` and a game's pause menu are: `pause()` stops game time whatever the
 * scale, `resume()` brings back the scale in force, `setTimeScale()` while paused takes effect on
 * `resume()`, and a scale of 0 freezes the set like a pause but is not one (`isPaused()` stays
 * false, `resume()` does not restart it). Lateness is the outer wheel's: at most one of its
 * ticks, which at a scale of 10 is up to ten ticks of game time.
 *
 * A single key is paused by taking its timer(s) out of the private wheel and keeping the
 * remaining time; resuming files them again. Key pauses and the set's pause are independent:
 * `resume()` does not resume a key paused with `pause(key)`.
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
 * ## Parts
 * The timers are not `TimerHandle` objects: they are indices into typed arrays (`slab.ts`),
 * filed in a wheel of their own on game time (`set-wheel.ts`); the keys are slots of a few arrays
 * found through one Map (`key-table.ts`), which holds the slab and the wheel and hears from the
 * wheel when a timer comes due. A buff costs no object and no closure, and a key set again from
 * its own `onExpire` reuses the slot that just fired: no allocation per expiry.
 *
 * ## Order
 * Expiries run in order of due time (whole ms of game time). Timers due on the same millisecond
 * run in an order fixed by the sequence of calls alone: usually the order they were set, though a
 * timer that a policy pushed later can come after timers set for its new millisecond in the
 * meantime (the private wheel re-files it lazily). On a `ManualClock` the same calls therefore
 * always produce the same callbacks in the same order, and so does a fixed-step loop.
 */
// Disposable and Symbol.dispose, stated here for consumers whose lib and types lack them (TypeScript 7 defaults to no @types).
/// <reference lib="esnext.disposable" preserve="true" />
import type { Clock } from '../clocks/clock.js';
import { GameClock } from './game-clock.js';
import { sharedWheel } from '../wheel/shared-wheel.js';
import {
  REPLACE,
  policyOf,
  refuseUnknownKeys,
  requireMaxStacks,
  requireOnExpire,
  loopLimitOf,
  requireOpenWheel,
  requireTimeScale,
  type TimerSetConstructorOptions,
  type TimerSetOptions,
  type TimerSetRestoreOptions,
} from './options.js';
import { loadTimers, planRestore, snapshotOf, stackTimes } from './save.js';
import type { SnapshotKey, TimerSetSnapshot } from './snapshot.js';
import { KeyTable } from './key-table.js';
import type { TimingWheel } from '../wheel/timing-wheel.js';
import { requireMs } from '../kit/options-kit.js';
import { guardedPublisher, typedChannel } from '../kit/channel-kit.js';

/** Name of the channel of {@link TimerSetExpireMessage}. */
export const CORE_TIMER_SET_EXPIRE_CHANNEL = 'tickwheel:core:timer-set-expire';

/** Published on `tickwheel:core:timer-set-expire` when a stack of a `TimerSet` key expires, before its `onExpire` runs. */
export interface TimerSetExpireMessage {
  readonly timerSet: TimerSet<unknown, unknown>;
  /** The key whose stack expired. */
  readonly key: unknown;
  /** Stacks the key still holds; 0 means the key is gone. */
  readonly stacksLeft: number;
}

/** @internal */
export const timerSetExpireChannel = typedChannel<TimerSetExpireMessage>(CORE_TIMER_SET_EXPIRE_CHANNEL);

/** Publishes on `tickwheel:core:timer-set-expire` when someone listens. */
export const publishTimerSetExpire = guardedPublisher(
  timerSetExpireChannel,
  (timerSet: TimerSet<unknown, unknown>, key: unknown, stacksLeft: number): TimerSetExpireMessage => ({
    timerSet,
    key,
    stacksLeft,
  }),
);

export type {
  ExpireCallback,
  ExpireInfo,
  TimerPolicy,
  TimerSetConstructorOptions,
  TimerSetOptions,
  TimerSetRestoreOptions,
} from './options.js';

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
  private readonly outer: TimingWheel;
  private readonly gameClock: GameClock;
  private readonly table: KeyTable<K, V>;
  private closed = false;

  /**
   * @param options - `onExpire`, the `wheel` to run on (default `sharedWheel()`) and the `timeScale` (default 1)
   * @throws TypeError when `onExpire` is not a function, `wheel` is not a TimingWheel or `options`
   *   has a key it does not know (`@tickwheel/core: unknown option bogus; known options: ...`); RangeError
   *   for a `timeScale` that is not a finite number >= 0; Error when the wheel is closed
   */
  constructor(options: TimerSetConstructorOptions<V, K>) {
    const onExpire = requireOnExpire<V, K>(options, 'an onExpire function');
    refuseUnknownKeys(options);
    const wheel = requireOpenWheel(options.wheel ?? sharedWheel());
    const timeScale = options.timeScale === undefined ? 1 : requireTimeScale(options.timeScale);
    this.outer = wheel;
    const gameClock = new GameClock(wheel, timeScale);
    this.gameClock = gameClock;
    // 1 ms ticks in game time, so the only rounding is the outer wheel's: never early, at most one of its ticks late.
    this.table = new KeyTable<K, V>(
      gameClock,
      (wake) => gameClock.createDriver(wake),
      onExpire,
      {
        channel: timerSetExpireChannel,
        publish: (key, stacksLeft) => publishTimerSetExpire(this as TimerSet<unknown, unknown>, key, stacksLeft),
      },
      loopLimitOf(wheel),
    );
  }

  /** Keys held (a key with several stacks counts once). */
  get size(): number {
    return this.table.size;
  }

  /** The set's game time in ms: the wheel clock's time, scaled by `timeScale`, not counting pauses. Stands still while paused. */
  get clock(): Clock {
    return this.gameClock;
  }

  /** The factor game time runs at relative to the wheel's time (see {@link TimerSet.setTimeScale}). */
  get timeScale(): number {
    return this.gameClock.timeScale;
  }

  /**
   * Runs the set's game time at `factor` times the wheel's time from now on: 0.5 for slow
   * motion, 2 for fast-forward, 0 to freeze the set. O(1) however many timers it holds: every
   * timer keeps its remaining game time (`remaining()` does not change), which now takes
   * `remaining / factor` of the wheel's time to run out. Independent of `pause()`: while paused
   * the new factor applies from `resume()`, and a factor of 0 does not make `isPaused()` true.
   *
   * @param factor - a finite number >= 0
   * @returns this set
   * @throws TypeError/RangeError naming `timeScale` and the value when `factor` is not a finite number >= 0
   * @example
   * ```ts
   * buffs.setTimeScale(0.25); // bullet time: every buff and cooldown runs at a quarter speed
   * buffs.setTimeScale(1);
   * ```
   */
  setTimeScale(factor: number): this {
    this.gameClock.setTimeScale(requireTimeScale(factor));
    return this;
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
    if (typeof durationMs !== 'number' || !(durationMs >= 0) || durationMs === Infinity)
      requireMs(durationMs, 'durationMs');
    const policy = options === undefined ? REPLACE : policyOf(options);
    const maxStacks = options?.maxStacks === undefined ? Infinity : requireMaxStacks(options.maxStacks);
    if (this.closed || this.outer.isClosed) throw this.closedError();
    this.table.set(key, durationMs, value, policy, maxStacks);
    return this;
  }

  /**
   * Removes the key and all its stacks without calling `onExpire` (a dispel). O(1) for a key with one stack.
   * @returns true if the key existed
   */
  delete(key: K): boolean {
    const table = this.table;
    const k = table.live(key);
    if (k < 0) return false;
    table.deleteKey(key, k);
    return true;
  }

  /** True while the key has at least one stack. */
  has(key: K): boolean {
    return this.table.live(key) >= 0;
  }

  /** The key's value, or undefined when the key is not set. */
  get(key: K): V | undefined {
    const k = this.table.live(key);
    return k < 0 ? undefined : this.table.valueAt(k);
  }

  /**
   * Game-time ms until the key is gone (its last stack expires), or undefined when the key is not
   * set. Paused keys (and a paused set) report their frozen remaining time.
   */
  remaining(key: K): number | undefined {
    const k = this.table.live(key);
    if (k < 0) return undefined;
    let most = 0;
    for (const ms of stackTimes(this.table, k)) if (ms > most) most = ms;
    return most;
  }

  /** The key's remaining time per stack, oldest stack first; empty when the key is not set. */
  remainingPerStack(key: K): number[] {
    const k = this.table.live(key);
    return k < 0 ? [] : stackTimes(this.table, k);
  }

  /** How many stacks the key holds; 0 when it is not set. */
  stacks(key: K): number {
    const k = this.table.live(key);
    return k < 0 ? 0 : this.table.stackCount(k);
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
    const k = this.table.live(key as K);
    if (k < 0 || this.table.isPaused(k)) return false;
    this.table.pauseKey(k);
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
    const k = this.table.live(key as K);
    if (k < 0 || !this.table.isPaused(k)) return false;
    this.table.resumeKey(k);
    return true;
  }

  /** Whether the key (with an argument) or the whole set (without) is paused by `pause()`. */
  isPaused(key?: K): boolean {
    if (arguments.length === 0) return this.gameClock.paused;
    const k = this.table.live(key as K);
    return k >= 0 && this.table.isPaused(k);
  }

  /** The keys, in insertion order (a key set again from its own `onExpire` keeps its place). */
  *keys(): IterableIterator<K> {
    for (const [key, k] of this.table.slots) if (this.table.stackCount(k) > 0) yield key;
  }

  /** Removes every key without calling `onExpire`. O(n). */
  clear(): void {
    const table = this.table;
    for (const k of table.slots.values()) table.releaseKey(k);
    table.slots.clear();
  }

  /** Clears the set and releases its timer on the wheel; `set()` throws afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clear();
    this.table.close();
  }

  /** Same as {@link TimerSet.close}, for `using buffs = new TimerSet(...)`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * A JSON-serialisable copy of every key: value, paused state and the remaining game time of
   * each stack, plus the set's own paused state, its time scale and the wall-clock time
   * (`Date.now()`). O(n).
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
    return snapshotOf(this.table, this.gameClock.paused, this.gameClock.timeScale);
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
    const { snapshot, values, elapsedMs, timeScale } = planRestore(saved, options);
    const set = new TimerSet<V, SnapshotKey>({ wheel: options.wheel, onExpire: options.onExpire, timeScale });
    if (snapshot.paused) set.gameClock.pause();
    loadTimers(set.table, snapshot.timers, values, elapsedMs);
    return set;
  }

  private closedError(): Error {
    return this.closed
      ? new Error('TimerSet is closed: it cannot set timers after close()')
      : new Error('TimingWheel is closed: the TimerSet cannot set timers on it');
  }
}
