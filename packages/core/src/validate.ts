/**
 * Argument checks shared by core and the option kit: every message names the option, the expectation and the value.
 * Must not depend on: anything (no imports; the wheel and the option kit build on it).
 */

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

/** Like {@link requireMs}, but `undefined` passes through (an option that was not given). */
export function optionalMs(value: unknown, name: string, min = 0): number | undefined {
  return value === undefined ? undefined : requireMs(value, name, min);
}

/** Throws a TypeError unless `value` is a function. */
export function requireFunction<F extends (...args: never[]) => unknown>(value: unknown, name: string): F {
  if (typeof value !== 'function') {
    throw new TypeError(`${name} must be a function, got ${describeValue(value)}`);
  }
  return value as F;
}

/** Throws unless `value` is an integer power of two within [min, max]. */
export function requirePowerOfTwo(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number') {
    throw new TypeError(`${name} must be a power of two from ${min} to ${max}, got ${describeValue(value)}`);
  }
  if (!Number.isInteger(value) || value < min || value > max || (value & (value - 1)) !== 0) {
    throw new RangeError(`${name} must be a power of two from ${min} to ${max}, got ${describeValue(value)}`);
  }
  return value;
}
