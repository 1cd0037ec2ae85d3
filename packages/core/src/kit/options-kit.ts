/**
 * The option kit: how every tickwheel package checks its arguments and options, with one message shape (internal).
 * Must not depend on: any adapter package or anything else in core (a leaf).
 *
 * undici checks every dispatcher option in one place and words each failure the same way; this is
 * ours. Every failure is a `TypeError` (wrong type) or a `RangeError` (right type, wrong value)
 * whose message names the package, the option path and the value, never dumping an object:
 *
 *     @tickwheel/fetch: retry.limit must be an integer >= 0, got -1
 *
 * One "off" for every limit: `0` turns it off, `Infinity` means the same (a limit that never
 * comes), and `false` (fetch's old spelling) still does with a one-time deprecation warning until
 * 1.0. A limit that is off reads as `Infinity`.
 *
 * Core's own functions (`schedule(delayMs, cb)`, `new TimerSet(...)`) check their arguments with
 * the unprefixed checks below ({@link requireMs}, {@link requireFunction}), whose messages name the
 * argument as 0.1 did: `delayMs must be a finite number >= 0, got -5`. Everything here, {@link describeValue} included, is reached by the
 * adapters through `@tickwheel/core/internal` and is not public API.
 */

/**
 * The longest delay honoured exactly (2^53 ms, about 285 000 years); longer ones never fire. The
 * bound of every duration option, so it lives in this leaf; the wheel's tick arithmetic imports it.
 */
export const MAX_DELAY_MS = 2 ** 53;

/**
 * Renders a value for an error message: primitives as `String()` shows them (strings quoted),
 * short plain data as JSON (`{"entity":1}`, `[]`), anything else by its type only
 * (`an object (TimingWheel)`, `an array of length 300`), never by contents that may be large,
 * private or circular.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (value === null || typeof value !== 'object') return String(value);
  const proto: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value) || proto === Object.prototype || proto === null) {
    const json = shortJson(value);
    if (json !== undefined) return json;
    return Array.isArray(value) ? `an array of length ${value.length}` : 'a plain object';
  }
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return `an object (${typeof name === 'string' && name !== '' ? name : Object.prototype.toString.call(value).slice(8, -1)})`;
}

/** JSON of plain data up to 60 characters; undefined for anything longer, cyclic or not JSON. */
function shortJson(value: object): string | undefined {
  try {
    const json = JSON.stringify(value);
    return json !== undefined && json.length <= 60 ? json : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Throws unless `value` is a finite number >= `min` (milliseconds, by convention).
 *
 * @param value - the value the caller passed
 * @param name - the argument or option name, used in the message (`delayMs`, `pingIntervalMs`)
 * @param min - the smallest allowed value, 0 by default
 * @returns the value, typed as a number
 * @throws TypeError when `value` is not a number; RangeError when it is NaN, infinite or below `min`
 * @example
 * ```ts
 * requireMs(-5, 'delayMs'); // RangeError: delayMs must be a finite number >= 0, got -5
 * ```
 */
export function requireMs(value: unknown, name: string, min = 0): number {
  if (typeof value !== 'number') {
    throw new TypeError(`${name} must be a finite number >= ${min}, got ${describeValue(value)} (${typeof value})`);
  }
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`${name} must be a finite number >= ${min}, got ${describeValue(value)}`);
  }
  return value;
}

/** Throws a TypeError unless `value` is a function. */
export function requireFunction<F extends (...args: never[]) => unknown>(value: unknown, name: string): F {
  if (typeof value !== 'function') {
    throw new TypeError(`${name} must be a function, got ${describeValue(value)}`);
  }
  return value as F;
}

/**
 * The checks of one package's options; every method throws on a bad value and returns it typed.
 * The adapters' kit adds the wheel check to these (`wheel-option-kit.ts`), which needs the wheel
 * this leaf must not import.
 */
export interface OptionChecks {
  /** The package the messages name, `@tickwheel/fetch`. */
  readonly pkg: string;
  /** An options object (`undefined` reads as `{}`) whose keys are all in `known`. */
  object(value: unknown, path: string, known: readonly string[]): Record<string, unknown>;
  /** A finite number in [min, max]. */
  number(value: unknown, path: string, min: number, max: number): number;
  /** A finite number of milliseconds in [min, max] (`max` defaults to the wheel's `MAX_DELAY_MS`). */
  durationMs(value: unknown, path: string, min?: number, max?: number): number;
  /** A limit in milliseconds: `0`, `Infinity` (and deprecated `false`) turn it off and read as `Infinity`. */
  limitMs(value: unknown, path: string): number;
  /** An integer in [min, max]. */
  integer(value: unknown, path: string, min: number, max?: number): number;
  /** A boolean. */
  boolean(value: unknown, path: string): boolean;
  /** A function. */
  function<F extends (...args: never[]) => unknown>(value: unknown, path: string): F;
  /** One of `allowed` (compared with `===`). */
  oneOf<T extends string | number>(value: unknown, path: string, allowed: readonly T[]): T;
  /** A `TypeError` in the kit's shape: `<pkg>: <path> <what>, got <value>`. */
  typeError(path: string, what: string, value: unknown): TypeError;
  /** A `RangeError` in the kit's shape. */
  rangeError(path: string, what: string, value: unknown): RangeError;
}

/** The packages already warned about `false` meaning "off", so each warns once per process. */
const warnedFalse = new Set<string>();

/** The option checks of `pkg` (`'@tickwheel/ws'`). */
export function optionChecks(pkg: string): OptionChecks {
  const message = (path: string, what: string, value: unknown): string =>
    `${pkg}: ${path} ${what}, got ${describeValue(value)}`;
  const typeError = (path: string, what: string, value: unknown): TypeError =>
    new TypeError(message(path, what, value));
  const rangeError = (path: string, what: string, value: unknown): RangeError =>
    new RangeError(message(path, what, value));

  /** `value` as a number in [min, max]; the message states the bound that was crossed. */
  const bounded = (value: unknown, path: string, kind: string, min: number, max: number, note = ''): number => {
    const what = `must be ${kind} >= ${min}${note}`;
    if (typeof value !== 'number') throw typeError(path, what, value);
    if (!(value >= min) || !Number.isFinite(value)) throw rangeError(path, what, value);
    if (value > max) throw rangeError(path, `must be at most ${max}`, value);
    return value;
  };

  const kit: OptionChecks = {
    pkg,
    typeError,
    rangeError,

    object(value, path, known) {
      if (value === undefined) return {};
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw typeError(path, 'must be an object', value);
      }
      for (const key of Object.keys(value)) {
        if (!known.includes(key)) {
          const where = path === 'options' ? key : `${path}.${key}`;
          throw new TypeError(`${pkg}: unknown option ${where}; known options: ${known.join(', ')}`);
        }
      }
      return value as Record<string, unknown>;
    },

    number(value, path, min, max) {
      return bounded(value, path, 'a finite number', min, max);
    },

    durationMs(value, path, min = 0, max = MAX_DELAY_MS) {
      return bounded(value, path, 'a finite number of ms', min, max);
    },

    limitMs(value, path) {
      if (value === false) {
        warnFalse(pkg, path);
        return Infinity;
      }
      if (value === 0 || value === Infinity) return Infinity;
      return bounded(value, path, 'a number of ms', 0, MAX_DELAY_MS, ' (0 or Infinity: no limit)');
    },

    integer(value, path, min, max = Number.MAX_SAFE_INTEGER) {
      if (typeof value === 'number' && !Number.isInteger(value)) {
        throw rangeError(path, `must be an integer >= ${min}`, value);
      }
      return bounded(value, path, 'an integer', min, max);
    },

    boolean(value, path) {
      if (typeof value !== 'boolean') throw typeError(path, 'must be a boolean', value);
      return value;
    },

    function<F extends (...args: never[]) => unknown>(value: unknown, path: string): F {
      if (typeof value !== 'function') throw typeError(path, 'must be a function', value);
      return value as F;
    },

    oneOf<T extends string | number>(value: unknown, path: string, allowed: readonly T[]): T {
      if (!allowed.includes(value as T)) {
        const list = allowed.map((a) => describeValue(a)).join(' or ');
        throw (typeof value === typeof allowed[0] ? rangeError : typeError)(path, `must be ${list}`, value);
      }
      return value as T;
    },
  };
  return kit;
}

function warnFalse(pkg: string, path: string): void {
  if (warnedFalse.has(pkg)) return;
  warnedFalse.add(pkg);
  process.emitWarning(
    `${pkg}: ${path}: false is deprecated as "no limit" and stops working in 1.0; pass 0 (or Infinity)`,
    { type: 'DeprecationWarning', code: 'TICKWHEEL_FALSE_LIMIT' },
  );
}

/**
 * `value`, or `fallback` when it was left out. Unlike `??`, `null` is not "left out": it reaches
 * the check and is refused as a bad value instead of silently taking the default.
 */
export function orDefault<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}
