import { describe, expect, it } from 'vitest';
import { decodePayload, encodePayload } from '../src/payload.js';

describe('payload', () => {
  describe('encodePayload', () => {
    it('encodes JSON values that survive a round trip unchanged', () => {
      const value = { a: [1, 'two', null, true, { 'odd key': -0.5 }], b: {}, c: [] };
      expect(decodePayload(encodePayload(value))).toEqual(value);
      expect(encodePayload(Object.assign(Object.create(null), { x: 1 }))).toBe('{"x":1}');
      expect(encodePayload('')).toBe('""');
    });

    it('encodes no payload as the empty string, which decodes to undefined', () => {
      expect(encodePayload(undefined)).toBe('');
      expect(decodePayload('')).toBeUndefined();
    });

    // The check itself is core's (packages/core/test/json-value.test.ts); here, that a payload is
    // refused in @tickwheel/redis's words with its path, for each kind of value JSON would change.
    it.each([
      [() => 1, /^@tickwheel\/redis: payload is a function/],
      [{ a: { b: [0, Infinity] } }, /^@tickwheel\/redis: payload\.a\.b\[1\] is Infinity, which JSON turns into null$/],
      [{ 'x-y': undefined }, /^@tickwheel\/redis: payload\["x-y"\] is undefined, which JSON drops$/],
      // eslint-disable-next-line no-sparse-arrays -- the hole is what is tested
      [[1, , 3], /^@tickwheel\/redis: payload is an array with holes/],
      [{ n: 1n }, /^@tickwheel\/redis: payload\.n is a bigint \(1n\), .*pass it as a string$/],
      [{ s: Symbol('s') }, /^@tickwheel\/redis: payload\.s is a symbol/],
      [{ [Symbol('k')]: 1 }, /^@tickwheel\/redis: payload has symbol keys/],
      [{ m: new Map() }, /^@tickwheel\/redis: payload\.m is a Map instance/],
      [{ d: new Date(0) }, /^@tickwheel\/redis: payload\.d is a Date instance; .*toISOString/],
      [{ j: { toJSON: () => 1 } }, /^@tickwheel\/redis: payload\.j\.toJSON is a function/],
      [
        Object.defineProperty({}, 'g', { get: () => 1, enumerable: true }),
        /^@tickwheel\/redis: payload\.g is a getter$/,
      ],
    ])('rejects %o, naming the path', (value, message) => {
      expect(() => encodePayload(value)).toThrow(TypeError);
      expect(() => encodePayload(value)).toThrow(message);
    });

    it('names the argument it was given as the root of the path', () => {
      expect(() => encodePayload({ at: NaN }, 'options.payload')).toThrow(
        /^@tickwheel\/redis: options\.payload\.at is NaN/,
      );
    });

    it('rejects cycles but accepts the same object twice', () => {
      const shared = { x: 1 };
      expect(encodePayload({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
      const cyclic: unknown[] = [];
      cyclic.push({ back: cyclic });
      expect(() => encodePayload(cyclic)).toThrow(
        /^@tickwheel\/redis: payload\[0\]\.back refers back to itself \(a cycle\)$/,
      );
    });
  });
});
