import { describe, expect, it } from 'vitest';
import { describeValue, optionalMs, requireFunction, requireMs, requirePowerOfTwo } from '../src/index.js';

describe('validate', () => {
  describe('requireMs', () => {
    it('names the option and the value', () => {
      expect(() => requireMs(-5, 'delayMs')).toThrow(new RangeError('delayMs must be a finite number >= 0, got -5'));
      expect(() => requireMs('5', 'timeoutMs')).toThrow(TypeError);
      expect(() => requireMs(3, 'pongTimeoutMs', 10)).toThrow(/pongTimeoutMs must be a finite number >= 10, got 3/);
      expect(requireMs(0, 'x')).toBe(0);
    });
  });

  describe('optionalMs', () => {
    it('passes undefined through and checks everything else', () => {
      expect(optionalMs(undefined, 'x')).toBeUndefined();
      expect(() => optionalMs(null, 'x')).toThrow(TypeError);
    });
  });

  describe('requireFunction', () => {
    it('rejects non-functions', () => {
      expect(() => requireFunction({}, 'onExpire')).toThrow(/onExpire must be a function, got \{\}/);
    });
  });

  describe('requirePowerOfTwo', () => {
    it('accepts powers of two in range only', () => {
      expect(requirePowerOfTwo(64, 'wheelSize', 2, 65536)).toBe(64);
      expect(() => requirePowerOfTwo(3, 'wheelSize', 2, 65536)).toThrow(RangeError);
      expect(() => requirePowerOfTwo(2 ** 20, 'wheelSize', 2, 65536)).toThrow(/wheelSize/);
    });
  });

  describe('describeValue', () => {
    it('renders values readably', () => {
      expect(describeValue('a')).toBe('"a"');
      expect(describeValue(10n)).toBe('10n');
      expect(describeValue(function named() {})).toBe('function named');
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect(describeValue(cyclic)).toBe('a plain object');
      expect(describeValue({})).toBe('{}');
      expect(describeValue([])).toBe('[]');
      expect(describeValue([1, 2, 3])).toBe('[1,2,3]');
      expect(describeValue({ entity: 1 })).toBe('{"entity":1}');
      expect(describeValue(new Array(100).fill(1))).toBe('an array of length 100');
      expect(describeValue(null)).toBe('null');
    });

    it('names an object by its type, never by its contents (private fields of a wheel)', () => {
      class Secretive {
        readonly token = 'hunter2';
      }
      expect(describeValue(new Secretive())).toBe('an object (Secretive)');
      expect(describeValue(new Map([['k', 'v']]))).toBe('an object (Map)');
      expect(describeValue(Object.create(Object.create(null)))).toBe('an object (Object)');
    });
  });
});
