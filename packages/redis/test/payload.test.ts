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

    it.each([
      [() => 1, /^payload is not JSON-serialisable: function/],
      [{ a: { b: [0, Infinity] } }, /^payload\.a\.b\[1\] is not JSON-serialisable: Infinity has no JSON form/],
      [{ 'x-y': undefined }, /^payload\["x-y"\] is not JSON-serialisable: undefined would be dropped/],
      // eslint-disable-next-line no-sparse-arrays -- the hole is what is tested
      [[1, , 3], /^payload\[1\] is not JSON-serialisable: a hole/],
      [{ n: 1n }, /^payload\.n is not JSON-serialisable: BigInt 1n/],
      [{ s: Symbol('s') }, /^payload\.s is not JSON-serialisable: a symbol/],
      [{ [Symbol('k')]: 1 }, /^payload is not JSON-serialisable: it has symbol keys/],
      [{ m: new Map() }, /^payload\.m is not JSON-serialisable: a Map instance/],
      [{ d: new Date(0) }, /^payload\.d is not JSON-serialisable: a Date instance .*toISOString/],
      [{ j: { toJSON: () => 1 } }, /^payload\.j is not JSON-serialisable: it has a toJSON method/],
    ])('rejects %o, naming the path', (value, message) => {
      expect(() => encodePayload(value)).toThrow(TypeError);
      expect(() => encodePayload(value)).toThrow(message);
    });

    it('rejects cycles but accepts the same object twice', () => {
      const shared = { x: 1 };
      expect(encodePayload({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
      const cyclic: unknown[] = [];
      cyclic.push({ back: cyclic });
      expect(() => encodePayload(cyclic)).toThrow(/^payload\[0\]\.back is not JSON-serialisable: a circular reference/);
    });
  });
});
