/**
 * The saved form of a {@link TimerSet}: plain JSON data, checked on the way out and on the way in.
 *
 * A save that cannot be read back faithfully is worse than an error, because it is discovered
 * only when a player logs in again. So `snapshot()` copies every value through
 * {@link copyJsonValue}, which accepts exactly what `JSON.stringify`/`JSON.parse` round-trip
 * unchanged and names the key and the path of anything else (a function, `undefined`, `NaN`,
 * a `Date`, a `Map`, a class instance, a cycle). {@link readSnapshot} checks a save before
 * `restore()` creates any timer.
 */
import { copyJson } from '../kit/json-value.js';
import { describeValue } from '../kit/options-kit.js';

/** The `format` tag every snapshot carries. */
export const SNAPSHOT_FORMAT = 'tickwheel.timer-set';
/** The snapshot layout version this build writes and reads. */
export const SNAPSHOT_VERSION = 1;

/** Keys a snapshot can hold: they survive JSON as themselves. */
export type SnapshotKey = string | number;

/** One key of a {@link TimerSetSnapshot}. */
export interface SavedTimer<V> {
  key: SnapshotKey;
  value: V;
  /** True when the key itself was paused with `pause(key)`. */
  paused: boolean;
  /** Remaining time of each stack in ms, oldest stack first; at least one. */
  remainingMs: number[];
}

/**
 * What {@link TimerSet.snapshot} returns: JSON-serialisable as it is (`JSON.stringify(saved)`),
 * and accepted by {@link TimerSet.restore} after a `JSON.parse`.
 */
export interface TimerSetSnapshot<V> {
  format: typeof SNAPSHOT_FORMAT;
  version: typeof SNAPSHOT_VERSION;
  /** Wall-clock time of the snapshot, `Date.now()`, used by `offline: 'elapsed'`. */
  savedAt: number;
  /** True when the whole set was paused with `pause()`. */
  paused: boolean;
  /** The set's time scale (see `setTimeScale`); a save without it reads as 1. */
  timeScale?: number;
  /** Every key, in the set's insertion order. */
  timers: SavedTimer<V>[];
}

/**
 * Returns a deep copy of `value` that JSON round-trips to an equal value (core's one JSON check,
 * `json-value.ts`), or throws a TypeError that names `key` and the path inside the value.
 */
export function copyJsonValue(value: unknown, key: unknown): unknown {
  return copyJson(value, 'value', (path, why) => {
    throw new TypeError(`snapshot: the value of key ${describeValue(key)} cannot be saved: ${path} ${why}`);
  });
}

/**
 * Checks that `saved` is a snapshot this build can restore, and returns it typed. Checks
 * everything before anything is created, so a bad save changes nothing.
 *
 * @throws TypeError/RangeError naming the field (and the key) that is wrong
 */
export function readSnapshot<V>(saved: unknown): TimerSetSnapshot<V> {
  if (saved === null || typeof saved !== 'object') {
    throw new TypeError(`saved must be a TimerSet snapshot object, got ${describeValue(saved)}`);
  }
  const s = saved as Partial<TimerSetSnapshot<V>>;
  if (s.format !== SNAPSHOT_FORMAT) {
    throw new TypeError(`saved.format must be ${JSON.stringify(SNAPSHOT_FORMAT)}, got ${describeValue(s.format)}`);
  }
  if (s.version !== SNAPSHOT_VERSION) {
    throw new RangeError(`saved.version must be ${SNAPSHOT_VERSION}, got ${describeValue(s.version)}`);
  }
  if (typeof s.savedAt !== 'number' || !Number.isFinite(s.savedAt)) {
    throw new TypeError(
      `saved.savedAt must be a finite number (Date.now() at the snapshot), got ${describeValue(s.savedAt)}`,
    );
  }
  if (typeof s.paused !== 'boolean')
    throw new TypeError(`saved.paused must be a boolean, got ${describeValue(s.paused)}`);
  if (
    s.timeScale !== undefined &&
    (typeof s.timeScale !== 'number' || !(s.timeScale >= 0) || s.timeScale === Infinity)
  ) {
    throw new RangeError(`saved.timeScale must be a finite number >= 0, got ${describeValue(s.timeScale)}`);
  }
  if (!Array.isArray(s.timers)) throw new TypeError(`saved.timers must be an array, got ${describeValue(s.timers)}`);
  const seen = new Set<SnapshotKey>();
  for (let i = 0; i < s.timers.length; i++) {
    const timer = s.timers[i] as Partial<SavedTimer<V>> | null;
    const where = `saved.timers[${i}]`;
    if (timer === null || typeof timer !== 'object')
      throw new TypeError(`${where} must be an object, got ${describeValue(timer)}`);
    const key = timer.key;
    if (!isSnapshotKey(key))
      throw new TypeError(`${where}.key must be a string or a finite number, got ${describeValue(key)}`);
    if (seen.has(key)) throw new RangeError(`${where}.key ${describeValue(key)} appears twice`);
    seen.add(key);
    if (typeof timer.paused !== 'boolean')
      throw new TypeError(
        `${where}.paused (key ${describeValue(key)}) must be a boolean, got ${describeValue(timer.paused)}`,
      );
    const stacks = timer.remainingMs;
    if (!Array.isArray(stacks) || stacks.length === 0) {
      throw new TypeError(
        `${where}.remainingMs (key ${describeValue(key)}) must be a non-empty array of milliseconds, got ${describeValue(stacks)}`,
      );
    }
    for (const ms of stacks) {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new RangeError(
          `${where}.remainingMs (key ${describeValue(key)}) must hold finite numbers >= 0, got ${describeValue(ms)}`,
        );
      }
    }
    if (!('value' in timer)) throw new TypeError(`${where}.value (key ${describeValue(key)}) is missing`);
  }
  return s as TimerSetSnapshot<V>;
}

/** True for the keys a snapshot can hold: strings and finite numbers. */
export function isSnapshotKey(key: unknown): key is SnapshotKey {
  return typeof key === 'string' || (typeof key === 'number' && Number.isFinite(key));
}
