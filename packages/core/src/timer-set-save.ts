/**
 * A TimerSet's keys to and from the timers of its saved form: what `snapshot()` and `restore()` do per key.
 * Must not depend on: the TimerSet class, the wheel's internals or the outer wheel (the store's own calls only).
 *
 * The checks and the format of a save are in timer-set-snapshot.ts; this file walks the store.
 */
import { refuseUnknownKeys, requireTimeScale, type TimerSetRestoreOptions } from './timer-set-options.js';
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
import type { KeyedStacks } from './timer-set-store.js';
import { describeValue } from './kit/options-kit.js';

/** The remaining time of each stack of key slot `k`, oldest first (frozen times for a paused key). */
export function stackTimes<K, V>(store: KeyedStacks<K, V>, k: number): number[] {
  const out: number[] = [];
  for (let s = store.oldestOf(k); s >= 0; s = store.newerOf(s)) out.push(store.remainingOfStack(k, s));
  return out;
}

/**
 * Every key held, in key order, as saved timers with deep-copied values.
 *
 * @throws TypeError naming the key when a key is not a string or finite number, or a value would
 *   not survive JSON unchanged
 */
export function saveTimers<K, V>(store: KeyedStacks<K, V>): SavedTimer<V>[] {
  const timers: SavedTimer<V>[] = [];
  for (const [key, k] of store.slots) {
    if (store.stackCount(k) === 0) continue;
    if (!isSnapshotKey(key)) {
      throw new TypeError(
        `snapshot: key ${describeValue(key)} cannot be saved: snapshot() needs string or finite number keys`,
      );
    }
    const value = copyJsonValue(store.valueAt(k), key) as V;
    timers.push({ key, value, paused: store.isPaused(k), remainingMs: stackTimes(store, k) });
  }
  return timers;
}

/**
 * Sets every saved timer in an empty store: `values[i]` for `timers[i]`, each running stack
 * `elapsedMs` shorter (never below 0), paused keys paused with their stacks' times unchanged.
 */
export function loadTimers<V>(
  store: KeyedStacks<SnapshotKey, V>,
  timers: readonly SavedTimer<V>[],
  values: readonly V[],
  elapsedMs: number,
): void {
  timers.forEach((timer, i) => {
    const k = store.newKey(timer.key, values[i]);
    if (timer.paused) store.markPaused(k);
    store.slots.set(timer.key, k);
    for (const ms of timer.remainingMs) store.addStack(k, timer.paused ? ms : Math.max(0, ms - elapsedMs));
  });
}

/** `snapshot()`: every key of the store, with the set's paused state, its time scale and the wall-clock time. */
export function snapshotOf<K, V>(store: KeyedStacks<K, V>, paused: boolean, timeScale: number): TimerSetSnapshot<V> {
  const timers = saveTimers(store);
  return { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, savedAt: Date.now(), paused, timeScale, timers };
}

/** What `restore()` loads, once `saved` and `options` (but for `onExpire` and `wheel`) are checked. */
export interface RestorePlan<V> {
  snapshot: TimerSetSnapshot<V>;
  /** Deep copies of the saved values, in timer order. */
  values: V[];
  /** Game ms each running stack loses (`offline: 'elapsed'` of a set saved running: wall-clock ms times its time scale), else 0. */
  elapsedMs: number;
  /** The restored set's time scale: the option, else the save's, else 1. */
  timeScale: number;
}

/**
 * Checks a snapshot and the restore options and copies the values, before anything is scheduled.
 * @throws TypeError/RangeError naming the field and key, or the option
 */
export function planRestore<V>(saved: TimerSetSnapshot<V>, options: TimerSetRestoreOptions<V>): RestorePlan<V> {
  const snapshot = readSnapshot<V>(saved);
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object with onExpire and offline, got ${describeValue(options)}`);
  }
  refuseUnknownKeys(options, true);
  if (options.offline !== 'frozen' && options.offline !== 'elapsed') {
    throw new RangeError(`offline must be 'frozen' or 'elapsed', got ${describeValue(options.offline)}`);
  }
  const timeScale = options.timeScale === undefined ? (snapshot.timeScale ?? 1) : requireTimeScale(options.timeScale);
  const values = snapshot.timers.map((timer) => copyJsonValue(timer.value, timer.key) as V);
  // The game time that passed offline ran at the scale the set was saved with.
  const elapsedMs =
    options.offline === 'elapsed' && !snapshot.paused
      ? Math.max(0, Date.now() - snapshot.savedAt) * (snapshot.timeScale ?? 1)
      : 0;
  return { snapshot, values, elapsedMs, timeScale };
}
