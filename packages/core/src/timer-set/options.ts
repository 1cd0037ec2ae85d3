/**
 * The vocabulary of {@link TimerSet}: policies, call and constructor options, expiry info, and their checks.
 */
import type { SnapshotKey } from './snapshot.js';
import { isTimingWheel, type TimingWheel } from '../wheel/timing-wheel.js';
import { describeValue, optionChecks, requireFunction } from '../kit/options-kit.js';

const kit = optionChecks('@tickwheel/core');

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
  /**
   * Game speed: game time runs at `timeScale` times the wheel's time (0.5 slow motion, 2
   * fast-forward, 0 frozen). A finite number >= 0; default 1. See {@link TimerSet.setTimeScale}.
   */
  timeScale?: number;
}

/** Options of {@link TimerSet.restore}. */
export interface TimerSetRestoreOptions<V> {
  /** As for the constructor. Default `sharedWheel()`. */
  wheel?: TimingWheel;
  /** As for the constructor. */
  onExpire: ExpireCallback<SnapshotKey, V>;
  /** As for the constructor; default the snapshot's `timeScale` (1 for a save without one). */
  timeScale?: number;
  /**
   * How to treat the wall-clock time between the snapshot and now:
   * - `'frozen'`: it did not happen; every timer resumes with its saved remaining time.
   * - `'elapsed'`: running timers lose it, as game time at the saved `timeScale` (timers that
   *   ran out fire on the next pass, in snapshot order); keys paused with `pause(key)` and a set
   *   saved while paused keep their time.
   */
  offline: 'frozen' | 'elapsed';
}

/** `timeScale` after checking it. @throws TypeError/RangeError naming `@tickwheel/core`, `timeScale` and the value */
export function requireTimeScale(value: unknown): number {
  return kit.number(value, 'timeScale', 0, Infinity);
}

/** The policies as small integers, the form the key table switches on. */
export const REPLACE = 0;
export const MAX = 1;
export const EXTEND = 2;
export const IGNORE = 3;
export const STACK = 4;

const POLICIES: readonly TimerPolicy[] = ['replace', 'max', 'extend', 'ignore', 'stack'];

/** The policy's number; a RangeError naming the value for anything else. */
export function policyCode(policy: unknown): number {
  switch (policy) {
    case 'replace':
      return REPLACE;
    case 'max':
      return MAX;
    case 'extend':
      return EXTEND;
    case 'ignore':
      return IGNORE;
    case 'stack':
      return STACK;
  }
  throw new RangeError(
    `policy must be one of ${POLICIES.map((p) => `'${p}'`).join(', ')}, got ${describeValue(policy)}`,
  );
}

export function requireMaxStacks(maxStacks: unknown): number {
  if (typeof maxStacks !== 'number') {
    throw new TypeError(
      `maxStacks must be an integer >= 1 or Infinity, got ${describeValue(maxStacks)} (${typeof maxStacks})`,
    );
  }
  if (maxStacks !== Infinity && !(Number.isInteger(maxStacks) && maxStacks >= 1)) {
    throw new RangeError(`maxStacks must be an integer >= 1 or Infinity, got ${maxStacks}`);
  }
  return maxStacks;
}

/** The policy code of `set()`'s `options` (REPLACE when it names none). @throws TypeError for a non-object */
export function policyOf(options: TimerSetOptions): number {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${describeValue(options)}`);
  }
  return options.policy === undefined ? REPLACE : policyCode(options.policy);
}

/**
 * The constructor's `onExpire` after checking `options`; `what` names the call in the message.
 * @throws TypeError when `options` is not an object or `onExpire` not a function
 */
export function requireOnExpire<V, K>(options: unknown, what: string): ExpireCallback<K, V> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object with ${what}, got ${describeValue(options)}`);
  }
  return requireFunction<ExpireCallback<K, V>>((options as { onExpire?: unknown }).onExpire, 'onExpire');
}

const CONSTRUCTOR_KEYS: readonly (keyof TimerSetConstructorOptions<unknown, unknown>)[] = [
  'wheel',
  'onExpire',
  'timeScale',
];
const RESTORE_KEYS: readonly (keyof TimerSetRestoreOptions<unknown>)[] = ['wheel', 'onExpire', 'offline', 'timeScale'];

/**
 * Refuses a key the constructor (or, with `restore`, `TimerSet.restore`) does not know, as the
 * adapters do: a misspelt `timescale` must not silently run the set at full speed.
 * @throws TypeError naming `@tickwheel/core`, the key and the known keys
 */
export function refuseUnknownKeys(options: object, restore = false): void {
  kit.object(options, 'options', restore ? RESTORE_KEYS : CONSTRUCTOR_KEYS);
}

/** `wheel` if it is an open TimingWheel. @throws TypeError for anything else, Error when it is closed */
export function requireOpenWheel(wheel: unknown): TimingWheel {
  if (!isTimingWheel(wheel)) throw new TypeError(`wheel must be a TimingWheel, got ${describeValue(wheel)}`);
  if (wheel.isClosed) throw new Error('wheel is closed: a TimerSet needs an open TimingWheel');
  return wheel;
}

/** The wheel's `loopLimit`; a wheel of an older copy of core that does not show it has the default, 1000. */
export function loopLimitOf(wheel: TimingWheel): number {
  const limit = (wheel as { loopLimit?: unknown }).loopLimit;
  return typeof limit === 'number' ? limit : 1000;
}

/** Shared, frozen `info` objects for the common stack counts, so an expiry allocates nothing. */
const EXPIRE_INFOS: readonly ExpireInfo[] = Array.from({ length: 16 }, (_, stacksLeft) =>
  Object.freeze({ stacksLeft }),
);

export function expireInfo(stacksLeft: number): ExpireInfo {
  return stacksLeft < EXPIRE_INFOS.length ? EXPIRE_INFOS[stacksLeft] : Object.freeze({ stacksLeft });
}
