/**
 * The saved form of a {@link TimerSet}: plain JSON data, checked on the way out and on the way in.
 * Must not depend on: the TimerSet class or its wheel (plain data and validate.ts only).
 *
 * A save that cannot be read back faithfully is worse than an error, because it is discovered
 * only when a player logs in again. So `snapshot()` copies every value through
 * {@link copyJsonValue}, which accepts exactly what `JSON.stringify`/`JSON.parse` round-trip
 * unchanged and names the key and the path of anything else (a function, `undefined`, `NaN`,
 * a `Date`, a `Map`, a class instance, a cycle). {@link readSnapshot} checks a save before
 * `restore()` creates any timer.
 */
import { describeValue } from './validate.js';

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
  /** Every key, in the set's insertion order. */
  timers: SavedTimer<V>[];
}

/**
 * Returns a deep copy of `value` that JSON round-trips to an equal value, or throws a TypeError
 * that names `key` and the path inside the value.
 *
 * Accepted: null, booleans, strings, finite numbers, dense arrays, and objects whose prototype
 * is `Object.prototype` or null with enumerable string-keyed data properties. Everything else
 * is refused rather than silently changed by `JSON.stringify`.
 */
export function copyJsonValue(value: unknown, key: unknown): unknown {
  return copy(value, '', key, new Set());
}

function copy(value: unknown, path: string, key: unknown, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      return refuse(key, path, `is ${value}, which JSON turns into null`);
    case 'undefined':
      return refuse(key, path, 'is undefined, which JSON drops');
    case 'function':
    case 'symbol':
    case 'bigint':
      return refuse(key, path, `is a ${typeof value} (${describeValue(value)})`);
  }
  if (value === null) return null;
  const object = value as object;
  if (ancestors.has(object)) return refuse(key, path, 'refers back to itself (a cycle)');
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      if (Object.keys(object).length !== object.length)
        return refuse(key, path, 'is an array with holes or extra properties, which JSON loses');
      const out: unknown[] = new Array(object.length);
      for (let i = 0; i < object.length; i++) {
        out[i] = copy(object[i], `${path}[${i}]`, key, ancestors);
      }
      return out;
    }
    const proto: unknown = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
      return refuse(key, path, `is a ${name} instance; only plain objects, arrays and primitives survive JSON`);
    }
    if (Object.getOwnPropertySymbols(object).length > 0) return refuse(key, path, 'has symbol keys, which JSON drops');
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(object)) {
      const descriptor = Object.getOwnPropertyDescriptor(object, name)!;
      const childPath = `${path}.${name}`;
      if (descriptor.get !== undefined) return refuse(key, childPath, 'is a getter');
      // defineProperty, not assignment: an own "__proto__" key (JSON.parse makes those) must stay a key.
      Object.defineProperty(out, name, {
        value: copy(descriptor.value, childPath, key, ancestors),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    ancestors.delete(object);
  }
}

function refuse(key: unknown, path: string, why: string): never {
  throw new TypeError(`snapshot: the value of key ${describeValue(key)} cannot be saved: value${path} ${why}`);
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
