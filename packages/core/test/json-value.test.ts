import { describe, expect, it } from 'vitest';
import { copyJson, type JsonRefusal } from '../src/kit/json-value.js';

/** Refuses with the path and the reason in one message, as a caller would. */
const refuse: JsonRefusal = (path, why) => {
  throw new TypeError(`${path} ${why}`);
};

describe('json-value', () => {
  describe('copyJson', () => {
    it('copies plain JSON data deeply, equal to what JSON.parse(JSON.stringify()) gives', () => {
      const value = { a: [1, 'two', null, true, { 'odd key': -0.5 }], b: {}, c: [], d: Object.create(null) };
      const copied = copyJson(value, 'value', refuse);
      expect(copied).toEqual(JSON.parse(JSON.stringify(value)));
      expect(copied).not.toBe(value);
      expect((copied as typeof value).a).not.toBe(value.a);
      expect((copied as typeof value).a[4]).not.toBe(value.a[4]);
    });

    it('returns primitives as they are', () => {
      for (const value of ['', 'x', 0, -0.5, 1e300, true, false, null]) {
        expect(copyJson(value, 'value', refuse)).toBe(value);
      }
    });

    it('keeps an own "__proto__" key a key, as JSON.parse makes it', () => {
      const parsed = JSON.parse('{"__proto__":{"x":1}}') as object;
      const copied = copyJson(parsed, 'value', refuse) as object;
      expect(Object.keys(copied)).toEqual(['__proto__']);
      expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
      expect(JSON.stringify(copied)).toBe('{"__proto__":{"x":1}}');
    });

    it('accepts the same object twice (a DAG), refuses a cycle', () => {
      const shared = { x: 1 };
      expect(copyJson({ a: shared, b: shared }, 'value', refuse)).toEqual({ a: { x: 1 }, b: { x: 1 } });
      const cyclic: unknown[] = [];
      cyclic.push({ back: cyclic });
      expect(() => copyJson(cyclic, 'payload', refuse)).toThrow(
        new TypeError('payload[0].back refers back to itself (a cycle)'),
      );
    });

    it.each([
      ['NaN', [1, NaN], 'value[1] is NaN, which JSON turns into null'],
      ['Infinity', { a: { b: [0, Infinity] } }, 'value.a.b[1] is Infinity, which JSON turns into null'],
      ['undefined', { 'x-y': undefined }, 'value["x-y"] is undefined, which JSON drops'],
      ['a bigint', { n: 1n }, 'value.n is a bigint (1n), which JSON cannot write; pass it as a string'],
      ['a function', { f: function f() {} }, 'value.f is a function (function f)'],
      ['a symbol', { s: Symbol('s') }, 'value.s is a symbol (Symbol(s))'],
      ['symbol keys', { [Symbol('k')]: 1 }, 'value has symbol keys, which JSON drops'],
      ['a Map', { m: new Map() }, 'value.m is a Map instance; only plain objects, arrays and primitives survive JSON'],
      [
        'a Date',
        { d: new Date(0) },
        'value.d is a Date instance; only plain objects, arrays and primitives survive JSON ' +
          '(pass date.toISOString() or date.getTime())',
      ],
      ['a getter', Object.defineProperty({}, 'g', { get: () => 1, enumerable: true }), 'value.g is a getter'],
      ['an own toJSON method', { j: { toJSON: () => 1 } }, 'value.j.toJSON is a function (function toJSON)'],
      // eslint-disable-next-line no-sparse-arrays -- the hole is the point: JSON would turn it into null
      ['a sparse array', [1, , 3], 'value is an array with holes or extra properties, which JSON loses'],
      [
        'an array with extra properties',
        Object.assign([1], { extra: true }),
        'value is an array with holes or extra properties, which JSON loses',
      ],
    ])('refuses %s, naming the path and the reason', (_what, value, message) => {
      expect(() => copyJson(value, 'value', refuse)).toThrow(new TypeError(message));
    });

    it('names a class instance by its class', () => {
      class Buff {
        readonly stacks = 1;
      }
      expect(() => copyJson([new Buff()], 'saved', refuse)).toThrow(/^saved\[0\] is a Buff instance;/);
    });

    it('leaves the refusal to the caller: whatever refuse throws is what the caller sees', () => {
      class PayloadError extends Error {}
      expect(() =>
        copyJson({ a: undefined }, 'payload', (path) => {
          throw new PayloadError(path);
        }),
      ).toThrow(PayloadError);
    });

    it('does not change the value it checks, even when it refuses part of it', () => {
      const value = { ok: [1, 2], bad: { at: new Date(0) } };
      const before = JSON.stringify(value);
      expect(() => copyJson(value, 'value', refuse)).toThrow(TypeError);
      expect(JSON.stringify(value)).toBe(before);
      expect(value.bad.at).toBeInstanceOf(Date);
    });
  });
});
