/**
 * A TimerSet's keys to and from the timers of its saved form: what `snapshot()` and `restore()` do per key.
 *
 * The checks and the format of a save are in snapshot.ts; this file walks the key table.
 */
import { refuseUnknownKeys, requireTimeScale, type TimerSetRestoreOptions } from './options.js';
import {
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  copyJsonValue,
  isSnapshotKey,
  readSnapshot,
  type SavedTimer,
  type SnapshotKey,
  type TimerSetSnapshot,
} from './snapshot.js';
import type { KeyTable } from './key-table.js';
import { describeValue } from '../kit/options-kit.js';

/** The remaining time of each stack of key slot `k`, oldest first (frozen times for a paused key). */
export function stackTimes<K, V>(table: KeyTable<K, V>, k: number): number[] {
  const out: number[] = [];
  for (let s = table.oldestOf(k); s >= 0; s = table.newerOf(s)) out.push(table.remainingOfStack(k, s));
  return out;
}

/**
 * Every key held, in key order, as saved timers with deep-copied values.
 *
 * @throws TypeError naming the key when a key is not a string or finite number, or a value would
 *   not survive JSON unchanged
 */
export function saveTimers<K, V>(table: KeyTable<K, V>): SavedTimer<V>[] {
  const timers: SavedTimer<V>[] = [];
  for (const [key, k] of table.slots) {
    if (table.stackCount(k) === 0) continue;
    if (!isSnapshotKey(key)) {
      throw new TypeError(
        `snapshot: key ${describeValue(key)} cannot be saved: snapshot() needs string or finite number keys`,
      );
    }
    const value = copyJsonValue(table.valueAt(k), key) as V;
    timers.push({ key, value, paused: table.isPaused(k), remainingMs: stackTimes(table, k) });
  }
  return timers;
}

/**
 * Sets every saved timer in an empty key table: `values[i]` for `timers[i]`, each running stack
 * `elapsedMs` shorter (never below 0), paused keys paused with their stacks' times unchanged.
 */
export function loadTimers<V>(
  table: KeyTable<SnapshotKey, V>,
  timers: readonly SavedTimer<V>[],
  values: readonly V[],
  elapsedMs: number,
): void {
  timers.forEach((timer, i) => {
    const k = table.newKey(timer.key, values[i]);
    if (timer.paused) table.markPaused(k);
    table.slots.set(timer.key, k);
    for (const ms of timer.remainingMs) table.addStack(k, timer.paused ? ms : Math.max(0, ms - elapsedMs));
  });
}

/** `snapshot()`: every key of the table, with the set's paused state, its time scale and the wall-clock time. */
export function snapshotOf<K, V>(table: KeyTable<K, V>, paused: boolean, timeScale: number): TimerSetSnapshot<V> {
  const timers = saveTimers(table);
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
