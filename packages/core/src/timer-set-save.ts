/**
 * A TimerSet's keys to and from the timers of its saved form: what `snapshot()` and `restore()` do per key.
 * Must not depend on: the TimerSet class, the wheel's internals or the outer wheel (the store's own calls only).
 *
 * The checks and the format of a save are in timer-set-snapshot.ts; this file walks the store.
 */
import { copyJsonValue, isSnapshotKey, type SavedTimer, type SnapshotKey } from './timer-set-snapshot.js';
import type { KeyedStacks } from './timer-set-store.js';
import { describeValue } from './options-kit.js';

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
