import { TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { optionalLimitMs, optionalWheel, optionsObject, parseOverrides, serviceKeyOf } from '../src/options.js';

describe('options', () => {
  describe('#parseOverrides', () => {
    it('splits service keys from method keys', () => {
      const { services, methods } = parseOverrides(
        { '/a.b.Svc': 1, '/a.b.Svc/Get': 2, '/Bare': 3, '/_x.Y_1/Z_2': 4 },
        'overrides',
        (v) => v,
      );
      expect([...services]).toEqual([
        ['/a.b.Svc', 1],
        ['/Bare', 3],
      ]);
      expect([...methods]).toEqual([
        ['/a.b.Svc/Get', 2],
        ['/_x.Y_1/Z_2', 4],
      ]);
    });

    it.each(['a.Svc', '/a.Svc/', '/a..Svc', '/a.Svc/Get/More', '/1a.Svc', '', '/'])('rejects the key %j', (key) => {
      expect(() => parseOverrides({ [key]: 1 }, 'overrides', (v) => v)).toThrow(RangeError);
    });
  });

  describe('#serviceKeyOf', () => {
    it('drops the method from a call path', () => {
      expect(serviceKeyOf('/pkg.Service/Method')).toBe('/pkg.Service');
    });
  });

  describe('#optionalLimitMs', () => {
    it('accepts undefined, zero, fractions and Infinity', () => {
      expect(optionalLimitMs(undefined, 'x')).toBeUndefined();
      expect(optionalLimitMs(0, 'x')).toBe(0);
      expect(optionalLimitMs(2.5, 'x')).toBe(2.5);
      expect(optionalLimitMs(Infinity, 'x')).toBe(Infinity);
    });

    it('rejects values below the minimum', () => {
      expect(() => optionalLimitMs(0.5, 'streamIdleMs', 1)).toThrow(
        'streamIdleMs must be a number >= 1 (Infinity for no limit), got 0.5',
      );
    });
  });

  describe('#optionsObject', () => {
    it('rejects arrays and null', () => {
      expect(() => optionsObject([], 'options')).toThrow('options must be an object, got []');
      expect(() => optionsObject(null, 'options')).toThrow('options must be an object, got null');
    });
  });

  describe('#optionalWheel', () => {
    it('accepts a TimingWheel', () => {
      const wheel = new TimingWheel();
      expect(optionalWheel(wheel, 'wheel')).toBe(wheel);
      wheel.close();
    });
  });
});
