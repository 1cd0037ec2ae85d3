import { describe, expect, it } from 'vitest';
import {
  EXTEND,
  expireInfo,
  IGNORE,
  MAX,
  policyCode,
  REPLACE,
  requireMaxStacks,
  STACK,
} from '../../src/timer-set/options.js';

describe('timer-set-options', () => {
  describe('#policyCode', () => {
    it('maps each policy to its code', () => {
      expect(['replace', 'max', 'extend', 'ignore', 'stack'].map(policyCode)).toEqual([
        REPLACE,
        MAX,
        EXTEND,
        IGNORE,
        STACK,
      ]);
    });

    it('refuses anything else with a RangeError listing the policies and naming the value', () => {
      expect(() => policyCode('refresh')).toThrow(
        new RangeError(`policy must be one of 'replace', 'max', 'extend', 'ignore', 'stack', got "refresh"`),
      );
      expect(() => policyCode(undefined)).toThrow(/got undefined$/);
    });
  });

  describe('#requireMaxStacks', () => {
    it('accepts integers >= 1 and Infinity', () => {
      expect(requireMaxStacks(1)).toBe(1);
      expect(requireMaxStacks(40)).toBe(40);
      expect(requireMaxStacks(Infinity)).toBe(Infinity);
    });

    it.each([
      ['5', TypeError, 'maxStacks must be an integer >= 1 or Infinity, got "5" (string)'],
      [0, RangeError, 'maxStacks must be an integer >= 1 or Infinity, got 0'],
      [1.5, RangeError, 'maxStacks must be an integer >= 1 or Infinity, got 1.5'],
      [Number.NaN, RangeError, 'maxStacks must be an integer >= 1 or Infinity, got NaN'],
      [-Infinity, RangeError, 'maxStacks must be an integer >= 1 or Infinity, got -Infinity'],
    ])('refuses %s', (value, type, message) => {
      expect(() => requireMaxStacks(value)).toThrow(new type(message));
    });
  });

  describe('#expireInfo', () => {
    it('hands out one shared frozen object per small stack count, so an expiry allocates nothing', () => {
      expect(expireInfo(0)).toEqual({ stacksLeft: 0 });
      expect(expireInfo(3)).toBe(expireInfo(3));
      expect(Object.isFrozen(expireInfo(3))).toBe(true);
    });

    it('makes a fresh frozen object for large counts', () => {
      expect(expireInfo(1_000)).toEqual({ stacksLeft: 1_000 });
      expect(Object.isFrozen(expireInfo(1_000))).toBe(true);
    });
  });
});
