/**
 * Payload encoding: JSON that must come back equal to what was given, checked before it is stored.
 * Must not depend on: ioredis, the scripts, the client or the worker.
 *
 * Payload encoding. A payload is stored as JSON, so it must come back equal to what was given:
 * `JSON.stringify` silently drops `undefined` and functions, turns `NaN` into `null`, Dates into
 * strings and Maps into `{}`, and throws on BigInt and cycles. Rather than store a different
 * value than the caller meant, {@link encodePayload} walks the value first and throws a TypeError
 * naming the path of the first offending part (`payload.items[2].at`).
 */
import { describeValue } from '@tickwheel/core';

function fail(path: string, what: string): never {
  throw new TypeError(`${path} is not JSON-serialisable: ${what}`);
}

function check(value: unknown, path: string, seen: Set<object>): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) fail(path, `${value} has no JSON form`);
      return;
    case 'undefined':
      return fail(path, 'undefined would be dropped');
    case 'bigint':
      return fail(path, `BigInt ${describeValue(value)}; pass it as a string`);
    case 'symbol':
      return fail(path, 'a symbol');
    case 'function':
      return fail(path, describeValue(value));
  }
  if (value === null) return;
  const object = value as object;
  if (seen.has(object)) fail(path, 'a circular reference');
  seen.add(object);
  if (Array.isArray(object)) {
    for (let i = 0; i < object.length; i++) {
      if (!(i in object)) fail(`${path}[${i}]`, 'a hole in a sparse array');
      check(object[i], `${path}[${i}]`, seen);
    }
  } else {
    const proto = Object.getPrototypeOf(object) as object | null;
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      fail(
        path,
        `a ${name} instance (only plain objects and arrays are stored)${object instanceof Date ? '; pass date.toISOString() or getTime()' : ''}`,
      );
    }
    if (Object.getOwnPropertySymbols(object).length > 0) fail(path, 'it has symbol keys, which would be dropped');
    if (typeof (object as { toJSON?: unknown }).toJSON === 'function') fail(path, 'it has a toJSON method');
    for (const key of Object.keys(object)) {
      check(
        (object as Record<string, unknown>)[key],
        /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`,
        seen,
      );
    }
  }
  seen.delete(object);
}

/**
 * Validates a payload and returns its JSON, or `''` for `undefined` (no payload; JSON text is
 * never empty, so the two cannot be confused).
 *
 * @throws TypeError naming the path of the first part that would not survive a JSON round trip
 */
export function encodePayload(payload: unknown, name = 'payload'): string {
  if (payload === undefined) return '';
  check(payload, name, new Set());
  return JSON.stringify(payload);
}

/** The inverse of {@link encodePayload}. */
export function decodePayload<P>(text: string | null | undefined): P | undefined {
  return text === '' || text === null || text === undefined ? undefined : (JSON.parse(text) as P);
}
